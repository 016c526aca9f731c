import { readDoc, userDocs } from './support/markdown.js';

/** What a user reads carries no development notes: no issue numbers, in prose or in code. */
test('README.md and docs/*.md mention no issue numbers', () => {
  const hits: string[] = [];
  for (const file of userDocs()) {
    readDoc(file).split('\n').forEach((line, i) => {
      if (/issues? \d/i.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(hits).toEqual([]);
});

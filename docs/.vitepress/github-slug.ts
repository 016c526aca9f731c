/**
 * The anchor GitHub gives a heading: its text in lower case, with everything but letters, digits,
 * `-`, `_` and spaces dropped, and each space a `-`. The site uses it too, so a link's
 * `#anchor` works in both places (VitePress's own slugs differ on `_`, `—` and runs of dashes).
 * Repeats get `-1`, `-2`… from the Markdown renderer, as on GitHub.
 */
export function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

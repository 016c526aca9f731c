/** One page of a list: its items, and the cursor of the next page (null on the last). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * A list that pages itself: `for await (const item of list)` walks every item across pages,
 * fetching the next page only when the current one is used up; {@link PagedList.firstPage} reads
 * one page. Nothing is fetched until one of them is used, and each walk starts again from the
 * first page.
 */
export class PagedList<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  /** The first page (or the one at the `cursor` the list was asked for). */
  firstPage(): Promise<Page<T>> {
    return this.fetchPage(undefined);
  }

  /** Every page in turn, each fetched when the previous one has been taken. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item, in list order, in one array (at most `max`, default 10 000, so a runaway list cannot exhaust memory). */
  async toArray(max = 10_000): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= max) break;
      out.push(item);
    }
    return out;
  }
}

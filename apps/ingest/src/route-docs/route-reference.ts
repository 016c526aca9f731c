/**
 * What the API reference says about one route beyond its schemas (`API_ROUTES` in openapi.ts has
 * those): what it does, in a paragraph or two of Markdown, and an example of each body it takes
 * and gives. `/openapi.json`, the page at `/docs/api` and the Markdown in docs/api/ all show them;
 * a test fails while a route has none.
 */
export interface RouteReference {
  /**
   * What the route does, for people: Markdown, without relative links (the same text is read on
   * `/docs/api` and in docs/api/). The scope sentence is added from the route table.
   */
  description: string;
  /** An example request body, for a route that takes one. */
  request?: unknown;
  /**
   * An example answer per 2xx status with a body (a 204 has none): the JSON body, or for a route
   * that answers another content type (`produces`), its text.
   */
  responses: Readonly<Record<number, unknown>>;
}

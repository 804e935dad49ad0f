import type { ConsoleMessage, Page, Request, Response } from 'playwright-core';

/**
 * What devtools would show a user as something wrong while it watches: console errors, failed
 * requests and answers of 400 or more (the browser logs each as "Failed to load resource").
 */
export function watchPageProblems(page: Page): { problems: string[]; stop(): void } {
  const problems: string[] = [];
  const onConsole = (message: ConsoleMessage) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  };
  const onFailed = (request: Request) => problems.push(`failed: ${request.method()} ${request.url()}`);
  const onResponse = (response: Response) => {
    if (response.status() >= 400)
      problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`);
  };
  page.on('console', onConsole);
  page.on('requestfailed', onFailed);
  page.on('response', onResponse);
  return {
    problems,
    stop: () => {
      page.off('console', onConsole);
      page.off('requestfailed', onFailed);
      page.off('response', onResponse);
    },
  };
}

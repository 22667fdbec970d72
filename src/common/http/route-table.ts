/**
 * The routes the application serves, registered once at start-up, so that the exception filter can answer
 * 405 (with an Allow header) instead of 404 when a path exists under other methods.
 */
interface RouteEntry {
  method: string;
  pattern: RegExp;
}

const routes: RouteEntry[] = [];

export function registerRoute(method: string, path: string): void {
  const pattern = new RegExp(
    '^' +
      path
        .replace(/\/+$/, '')
        .replace(/[.+?^$()[\]\\|]/g, '\\$&')
        .replace(/\{[^/]+\}|:[A-Za-z0-9_]+/g, '[^/]+') +
      '/?$',
  );
  routes.push({ method: method.toUpperCase(), pattern });
}

export function allowedMethodsFor(path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.pattern.test(path)) {
      methods.add(route.method);
    }
  }
  return [...methods].sort();
}

export function clearRoutes(): void {
  routes.length = 0;
}

/** Requests no route matched (marked by the exception filter), so metrics label them `unmatched`. */
const unmatched = new WeakSet<object>();

export function markUnmatched(request: object): void {
  unmatched.add(request);
}

export function isUnmatched(request: object): boolean {
  return unmatched.has(request);
}

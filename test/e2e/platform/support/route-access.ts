import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { API_PREFIX, HOST_ROOT_ROUTES } from '../../../../src/app.setup.js';
import {
  AUTHENTICATED_ONLY,
  IS_PUBLIC,
  REQUIRED_SCOPES,
} from '../../../../src/common/auth/auth.decorators.js';

export interface RouteAccess {
  method: string;
  path: string;
  controller: string;
  handler: string;
  /** `public`, `authenticated`, `scopes: a b`, or `NONE` when the route declares nothing (a bug). */
  access: string;
}

function asArray(value: string | string[] | undefined): string[] {
  if (value === undefined) {
    return [''];
  }
  return Array.isArray(value) ? value : [value];
}

function join(...parts: string[]): string {
  return parts
    .flatMap((part) => part.split('/'))
    .filter((segment) => segment !== '')
    .join('/');
}

/** Whether configureApp serves `path` (without leading slash) at the host root rather than under /api/v1. */
function atHostRoot(path: string): boolean {
  return HOST_ROOT_ROUTES.some((route) =>
    route.endsWith('{*path}') ? path.startsWith(route.slice(0, -'{*path}'.length)) : route === path,
  );
}

/**
 * Every HTTP handler of every controller the application mounted, with the access rule it declares
 * (handler metadata wins over the controller's, as in AuthGuard).
 */
export function routeAccessTable(app: INestApplication): RouteAccess[] {
  const discovery = new DiscoveryService(app.get(ModulesContainer));
  const reflector = new Reflector();
  const scanner = new MetadataScanner();
  const rows: RouteAccess[] = [];
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as Type<unknown> | undefined;
    if (!controller || !wrapper.instance) {
      continue;
    }
    const prototype = Object.getPrototypeOf(wrapper.instance) as Record<
      string,
      (...args: unknown[]) => unknown
    >;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      const methodPaths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (methodPaths === undefined || requestMethod === undefined) {
        continue;
      }
      const targets = [handler, controller];
      const isPublic = reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets);
      const scopes = reflector.getAllAndOverride<string[] | undefined>(REQUIRED_SCOPES, targets);
      const authenticated = reflector.getAllAndOverride<boolean | undefined>(AUTHENTICATED_ONLY, targets);
      const access = isPublic
        ? 'public'
        : scopes
          ? `scopes: ${scopes.join(' ')}`
          : authenticated
            ? 'authenticated'
            : 'NONE';
      for (const controllerPath of asArray(
        Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined,
      )) {
        for (const methodPath of asArray(methodPaths)) {
          const path = join(controllerPath, methodPath);
          rows.push({
            method: RequestMethod[requestMethod],
            path: `/${atHostRoot(path) ? path : join(API_PREFIX, path)}`,
            controller: controller.name,
            handler: name,
            access,
          });
        }
      }
    }
  }
  return rows.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

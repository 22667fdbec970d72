import { Controller, Get, Module } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { routeAccessTable } from './support/route-access.js';

/** A controller that forgot to say who may call it. */
@Controller('platform-undeclared')
class UndeclaredController {
  @Get()
  oops(): { leaked: boolean } {
    return { leaked: true };
  }
}

@Module({ controllers: [UndeclaredController] })
class UndeclaredModule {}

describe('route access declarations', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('every route declares @Public(), @Authenticated() or @RequireScopes()', () => {
    const table = routeAccessTable(t.app);
    expect(table.length).toBeGreaterThan(5);
    const undeclared = table
      .filter((row) => row.access === 'NONE')
      .map((row) => `${row.method} ${row.path} (${row.controller}.${row.handler})`);
    expect(undeclared).toEqual([]);
  });

  /**
   * Which access each route needs. A change here is a permission change: review it, then refresh with
   * `npx jest test/e2e/platform/route-access -u`.
   */
  it('matches the reviewed table of route access', () => {
    const table = routeAccessTable(t.app)
      .map((row) => `${row.method.padEnd(7)} ${row.path.padEnd(60)} ${row.access}`)
      .join('\n');
    expect(`\n${table}\n`).toMatchSnapshot();
  });

  it('catches a route that declares nothing, and the guard denies it', async () => {
    const bad = await createTestApp({}, { extraModules: [UndeclaredModule] });
    try {
      const undeclared = routeAccessTable(bad.app).filter((row) => row.access === 'NONE');
      expect(undeclared).toEqual([
        {
          method: 'GET',
          path: '/api/v1/platform-undeclared',
          controller: 'UndeclaredController',
          handler: 'oops',
          access: 'NONE',
        },
      ]);
      const res = await request(bad.http).get('/api/v1/platform-undeclared').expect(403);
      expect(res.body).toMatchObject({
        code: 'FORBIDDEN',
        details: { reason: 'route declares no access rule' },
      });
    } finally {
      await bad.close();
    }
  });
});

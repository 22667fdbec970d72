import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { isUnmatched } from '../../common/http/route-table.js';

interface PgPoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * Prometheus metrics: request counts and latency by route and status, Node process metrics, pool stats.
 * One registry per application instance (tests boot several apps in one process).
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(dataSource: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    const pool = (): PgPoolStats | undefined =>
      (dataSource.driver as unknown as { master?: PgPoolStats }).master;
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const stats = pool();
        if (stats) {
          this.set({ state: 'total' }, stats.totalCount);
          this.set({ state: 'idle' }, stats.idleCount);
          this.set({ state: 'waiting' }, stats.waitingCount);
        }
      },
    });
  }

  /** Express middleware timing every request; the route label is the matched pattern, never the raw URL. */
  readonly middleware = (request: Request, response: Response, next: NextFunction): void => {
    const end = this.latency.startTimer();
    response.on('finish', () => {
      const routePath = (request.route as { path?: string } | undefined)?.path;
      // Unknown paths (and wrong methods) share one label, so URL scans cannot multiply the series.
      const route = routePath && !isUnmatched(request) ? `${request.baseUrl}${routePath}` : 'unmatched';
      const labels = { method: request.method, route, status: String(response.statusCode) };
      this.requests.inc(labels);
      end(labels);
    });
    next();
  };

  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

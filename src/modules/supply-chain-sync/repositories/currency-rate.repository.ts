import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { CurrencyRate } from '../domain/units.js';
import { queryRows } from '../../../database/sql-result.js';

export interface CurrencyRateRecord extends CurrencyRate {
  updatedBy: string;
  updatedAt: Date;
}

/** An organization's exchange-rate table. */
@Injectable()
export class CurrencyRateRepository {
  constructor(private readonly tx: TransactionHost) {}

  list(organizationId: string): Promise<CurrencyRateRecord[]> {
    return queryRows<CurrencyRateRecord>(
      this.tx,
      `SELECT base_currency AS base, quote_currency AS quote, rate, to_char(effective_date, 'YYYY-MM-DD') AS "effectiveDate",
              updated_by AS "updatedBy", updated_at AS "updatedAt"
         FROM sync_currency_rates WHERE organization_id = $1 ORDER BY base_currency, quote_currency, effective_date DESC`,
      [organizationId],
    );
  }

  /** Replaces the whole table (PUT semantics). */
  async replace(organizationId: string, rates: readonly CurrencyRate[], userId: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM sync_currency_rates WHERE organization_id = $1`, [
      organizationId,
    ]);
    if (rates.length === 0) {
      return;
    }
    await this.tx.manager.query(
      `INSERT INTO sync_currency_rates (organization_id, base_currency, quote_currency, effective_date, rate, updated_by)
       SELECT $1, r.base, r.quote, r.effective_date::date, r.rate, $3
         FROM jsonb_to_recordset($2::jsonb) AS r(base text, quote text, effective_date text, rate double precision)`,
      [
        organizationId,
        JSON.stringify(
          rates.map((rate) => ({
            base: rate.base,
            quote: rate.quote,
            effective_date: rate.effectiveDate,
            rate: rate.rate,
          })),
        ),
        userId,
      ],
    );
  }
}

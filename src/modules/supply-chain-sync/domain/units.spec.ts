import { lookupRate, physicalFactor } from './units.js';

describe('units', () => {
  it('converts built-in weights and lengths, refuses across dimensions', () => {
    expect(physicalFactor('kg', 'g')).toBe(1000);
    expect(physicalFactor('lb', 'kg')).toBeCloseTo(0.45359237, 8);
    expect(physicalFactor('Pounds', 'oz')).toBeCloseTo(16, 8);
    expect(physicalFactor('m', 'cm')).toBeCloseTo(100, 8);
    expect(physicalFactor('in', 'mm')).toBeCloseTo(25.4, 8);
    expect(physicalFactor('kg', 'm')).toBeNull();
    expect(physicalFactor('kg', 'parsec')).toBeNull();
  });

  it('looks rates up by day, newest first, inverse when needed', () => {
    const table = [
      { base: 'USD', quote: 'EUR', rate: 0.9, effectiveDate: '2026-01-01' },
      { base: 'USD', quote: 'EUR', rate: 0.92, effectiveDate: '2026-06-01' },
      { base: 'GBP', quote: 'USD', rate: 1.25, effectiveDate: '2026-01-01' },
    ];
    expect(lookupRate(table, 'usd', 'EUR', 'daily', '2026-03-01')).toBe(0.9);
    expect(lookupRate(table, 'USD', 'EUR', 'daily', '2026-07-01')).toBe(0.92);
    expect(lookupRate(table, 'USD', 'EUR', 'realtime', '2025-01-01')).toBe(0.92);
    expect(lookupRate(table, 'USD', 'GBP', 'daily', '2026-03-01')).toBeCloseTo(0.8, 10);
    expect(lookupRate(table, 'EUR', 'EUR', 'daily', '2026-03-01')).toBe(1);
    expect(lookupRate(table, 'USD', 'EUR', 'daily', '2025-01-01')).toBeNull();
    expect(lookupRate(table, 'JPY', 'EUR', 'daily', '2026-03-01')).toBeNull();
  });
});

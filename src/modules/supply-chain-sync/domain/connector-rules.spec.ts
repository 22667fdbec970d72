import { invertMapping, nextCronTime } from './connector-rules.js';

describe('connector rules', () => {
  it('finds the next cron time in the schedule time zone', () => {
    const after = new Date('2030-01-01T12:00:00Z');
    expect(nextCronTime('0 9 * * *', 'Asia/Tokyo', after).toISOString()).toBe('2030-01-02T00:00:00.000Z');
    expect(nextCronTime('0 9 * * *', 'Europe/Paris', after).toISOString()).toBe('2030-01-02T08:00:00.000Z');
    expect(nextCronTime('*/15 * * * *', null, after).toISOString()).toBe('2030-01-01T12:15:00.000Z');
    // Summer time: 09:00 in Paris is 07:00 UTC.
    expect(nextCronTime('0 9 * * *', 'Europe/Paris', new Date('2030-07-01T12:00:00Z')).toISOString()).toBe(
      '2030-07-02T07:00:00.000Z',
    );
  });

  it('inverts only direct rules for the reverse direction', () => {
    expect(
      invertMapping({
        unmappedFields: 'ignore',
        rules: [
          { sourceFieldId: 'a', targetFieldId: 'x' },
          {
            sourceFieldId: 'b',
            targetFieldId: 'y',
            transformType: 'format',
            formatConfig: { template: '${value}!' },
          },
          { sourceFieldId: 'c', targetFieldId: 'z', enabled: false },
        ],
      }),
    ).toEqual({
      unmappedFields: 'ignore',
      rules: [{ sourceFieldId: 'x', targetFieldId: 'a', transformType: 'direct', propagationMode: 'oneway' }],
    });
  });
});

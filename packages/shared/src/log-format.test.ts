import { logPlanOf } from './log-format.js';

describe('logPlanOf', () => {
  it('is pretty in development, with request lines at debug and a line per event', () => {
    expect(logPlanOf({ NODE_ENV: 'development' })).toEqual({ format: 'pretty', requestLevel: 'debug', eventLevel: 'info' });
  });
  it('is JSON as always in production and when NODE_ENV is unset', () => {
    for (const env of [{ NODE_ENV: 'production' }, {}, { NODE_ENV: 'test' }]) expect(logPlanOf(env)).toEqual({ format: 'json', requestLevel: 'info', eventLevel: 'debug' });
  });
  it('lets LOG_FORMAT override either way', () => {
    expect(logPlanOf({ NODE_ENV: 'development', LOG_FORMAT: 'json' }).format).toBe('json');
    expect(logPlanOf({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' }).format).toBe('pretty');
    expect(logPlanOf({ NODE_ENV: 'development', LOG_FORMAT: '' }).format).toBe('pretty');
  });
});

import { tracingSettings } from './tracing.js';

describe('tracingSettings: off unless OTEL_* asks', () => {
  test('nothing set → off', () => {
    expect(tracingSettings({}, 'postern-ingest')).toBeNull();
  });

  test.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'http://collector:4318/v1/traces'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'http://collector:4318/v1/traces'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x.example/otlp/traces', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318' }, 'https://x.example/otlp/traces'],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, 'http://localhost:4318/v1/traces'],
  ])('%j → on, exporting to %s', (env, url) => {
    expect(tracingSettings(env, 'postern-sender')).toEqual({ url, serviceName: 'postern-sender' });
  });

  test('OTEL_SERVICE_NAME names the service', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'webhooks' }, 'postern-ingest')?.serviceName).toBe('webhooks');
  });

  test.each([[{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }], [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }]])('%j → off', (env) => {
    expect(tracingSettings(env, 'postern-ingest')).toBeNull();
  });

  test.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER: "zipkin" is not supported/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT: .* is not an http\(s\) URL/],
  ])('%j → an error naming the variable', (env, message) => {
    expect(() => tracingSettings(env, 'postern-ingest')).toThrow(message);
  });
});

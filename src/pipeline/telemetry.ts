import type * as OpenTelemetry from '@opentelemetry/api';

/**
 * `@opentelemetry/api`, loaded only once something registered with it. An application that installs an
 * OpenTelemetry SDK registers a tracer provider in the API's process-wide slot (a `Symbol.for` key shared by
 * every copy of the 1.x API); until that slot exists there is no one to report to, so Axon neither loads the
 * API nor builds spans, and importing the core costs nothing for telemetry.
 */
const API_SLOT = Symbol.for('opentelemetry.js.api.1');
let api: typeof OpenTelemetry | undefined;
let loading: Promise<void> | undefined;

/** Load the API if an SDK is installed. Awaited at the start of each run; cheap once loaded or when none is. */
export async function prepareTelemetry(): Promise<void> {
  if (api !== undefined || !(API_SLOT in globalThis)) return;
  loading ??= import('@opentelemetry/api').then(
    (module) => {
      api = module;
    },
    () => {
      // Not installed where the SDK is: telemetry stays off rather than failing the run.
      loading = undefined;
    },
  );
  await loading;
}

/** The loaded API, or `undefined` while telemetry is off. */
export function telemetryApi(): typeof OpenTelemetry | undefined {
  return api;
}

/** A span that records nothing, used while telemetry is off. */
export const NO_SPAN: OpenTelemetry.Span = {
  spanContext: () => ({ traceId: '', spanId: '', traceFlags: 0 }),
  setAttribute() {
    return NO_SPAN;
  },
  setAttributes() {
    return NO_SPAN;
  },
  addEvent() {
    return NO_SPAN;
  },
  addLink() {
    return NO_SPAN;
  },
  addLinks() {
    return NO_SPAN;
  },
  setStatus() {
    return NO_SPAN;
  },
  updateName() {
    return NO_SPAN;
  },
  end() {},
  isRecording: () => false,
  recordException() {},
};

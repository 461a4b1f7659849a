import { context } from '@opentelemetry/api';
import { SeverityNumber, type AnyValueMap, type LogRecord, type Logger as OtelLogger } from '@opentelemetry/api-logs';
import { traceLogFields } from './instruments.js';

/**
 * pino lines → OpenTelemetry log records. Every service's logger tees each JSON line to
 * `exportLogLine` (createLogger's `tee`); while no log exporter is configured that is one
 * function call and a test of `exporting` per line (issue 9 counts every millisecond).
 *
 * Why not @opentelemetry/instrumentation-pino: it patches pino through require/import hooks
 * (`--import` loader flags on every service's command line, and no effect on a logger built before
 * the hook) and installs its own mixin; the services already carry `trace_id`/`span_id` through
 * `traceLogFields`, so a plain tee is all that is left to do.
 */

/** The OTel logger records go to; undefined while logs are not exported. */
let exporting: OtelLogger | undefined;

/** Called by initTelemetry when it starts (a logger) or stops (undefined) exporting logs. */
export function setLogExport(logger: OtelLogger | undefined): void {
  exporting = logger;
}

/** Whether log lines are exported as OTel log records. */
export function logsExported(): boolean {
  return exporting !== undefined;
}

/** Emits a log record another thread logged (threads.ts) on this thread's log export, when there is one. */
export function forwardedLogRecord(record: LogRecord): void {
  exporting?.emit(record);
}

/** pino's numeric levels → OTel severities (the spec's mapping table). */
function severityOf(level: number): { number: SeverityNumber; text: string } {
  if (level >= 60) return { number: SeverityNumber.FATAL, text: 'FATAL' };
  if (level >= 50) return { number: SeverityNumber.ERROR, text: 'ERROR' };
  if (level >= 40) return { number: SeverityNumber.WARN, text: 'WARN' };
  if (level >= 30) return { number: SeverityNumber.INFO, text: 'INFO' };
  if (level >= 20) return { number: SeverityNumber.DEBUG, text: 'DEBUG' };
  return { number: SeverityNumber.TRACE, text: 'TRACE' };
}

/**
 * Emits one pino JSON line as an OTel log record. pino calls its destination synchronously
 * inside the logging call, so the active context here is the caller's: the record carries the
 * trace and span the line was logged in (the same ids the mixin wrote into the line).
 */
export function exportLogLine(line: string): void {
  const logger = exporting;
  if (!logger) return;
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: line, context: context.active() });
    return;
  }
  // Fields the record carries elsewhere (time, severity, body, trace context) or that the resource says (pid, host).
  const { level, time, msg, trace_id: _t, span_id: _s, pid: _p, hostname: _h, ...attributes } = rec;
  const severity = severityOf(typeof level === 'number' ? level : 30);
  logger.emit({
    severityNumber: severity.number,
    severityText: severity.text,
    body: typeof msg === 'string' ? msg : '',
    attributes: attributes as AnyValueMap,
    ...(typeof time === 'number' ? { timestamp: time } : {}),
    context: context.active(),
  });
}

/** createLogger options of every service: trace ids on each line, and each line exported when logs are. */
export const logTelemetry = { mixin: traceLogFields, tee: exportLogLine } as const;

/**
 * Metric names a PromQL expression reads, from Prometheus's own grammar (@prometheus-io/lezer-promql,
 * the parser of the Prometheus web UI): the `Identifier` of every vector selector. A syntax error
 * fails loudly, so a typo in a dashboard query cannot pass as "references nothing".
 */
import { readFileSync } from 'node:fs';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';

/** Grafana's interval variables, replaced by a duration before parsing. */
const GRAFANA_INTERVAL = /\$__(rate_interval|interval|range)\b/g;

export function metricNamesOf(expr: string): string[] {
  const text = expr.replace(GRAFANA_INTERVAL, '5m');
  const tree = parser.parse(text);
  const names = new Set<string>();
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) throw new Error(`PromQL syntax error at ${cursor.from} in: ${expr}`);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') names.add(text.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return [...names];
}

/** Every `expr` of a Grafana dashboard's panels (rows' nested panels included), with the panel title. */
export function dashboardQueries(file: string): Array<{ where: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels?: Panel[] };
  type Panel = { title?: string; panels?: Panel[]; targets?: Array<{ expr?: string }> };
  const walk = (panels: Panel[] = []): Array<{ where: string; expr: string }> =>
    panels.flatMap((p) => [...(p.targets ?? []).filter((t) => t.expr).map((t) => ({ where: `panel "${p.title ?? '?'}"`, expr: t.expr! })), ...walk(p.panels)]);
  return walk(dashboard.panels);
}

/** Every `expr` of a Prometheus rule file (alerting and recording rules), with the rule's name. */
export function ruleQueries(file: string): Array<{ where: string; expr: string }> {
  const doc = parseYaml(readFileSync(file, 'utf8')) as { groups?: Array<{ rules?: Array<{ alert?: string; record?: string; expr?: string }> }> };
  return (doc.groups ?? []).flatMap((g) => (g.rules ?? []).map((r) => ({ where: `rule ${r.alert ?? r.record ?? '?'}`, expr: String(r.expr ?? '') })));
}

/** Metric names in a Prometheus text exposition (series names, so histograms give `_bucket`, `_sum`, `_count`). */
export function exposedMetricNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const line of scrape.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (m) names.add(m[0]);
  }
  return names;
}

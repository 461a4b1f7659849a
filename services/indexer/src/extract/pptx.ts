import { ExtractError } from './errors.js';
import type { DocUnit, Extraction, ExtractLimits } from './types.js';
import { localName, parseXmlPart, readRelationships } from './xml.js';
import type { ZipArchive } from './zip.js';

/**
 * PPTX: each slide's text (the `a:t` runs, one line per paragraph), in the
 * order of the presentation's slide list. The first line is the slide's label.
 */
export function extractPptx(zip: ZipArchive, limits: ExtractLimits): Extraction {
  const slides = slideParts(zip);
  const max = limits.maxUnits.pptx ?? slides.length;
  const units: DocUnit[] = [];
  let chars = 0;
  let complete = slides.length <= max;
  for (const [i, part] of slides.entries()) {
    if (i >= max || chars >= limits.maxChars) {
      complete = false;
      break;
    }
    const paragraphs: string[] = [];
    let para = '';
    let inText = false;
    parseXmlPart(zip, part, {
      open(tag) {
        if (tag.name === 'a:t') inText = true;
        else if (tag.name === 'a:br') para += '\n';
        else if (tag.name === 'a:tab') para += '\t';
      },
      text(t) {
        if (inText) para += t;
      },
      close(tag) {
        if (tag.name === 'a:t') inText = false;
        else if (tag.name === 'a:p') {
          if (para.trim() !== '') paragraphs.push(para.trim());
          para = '';
        }
      },
    });
    const text = paragraphs.join('\n');
    chars += text.length;
    units.push({ n: i + 1, ...(paragraphs[0] ? { label: paragraphs[0].slice(0, 120) } : {}), text: text || '(no text)' });
  }
  return { kind: 'pptx', total: slides.length, units, complete, notes: [] };
}

function slideParts(zip: ZipArchive): string[] {
  if (!zip.has('ppt/presentation.xml')) throw new ExtractError('INVALID_ARGUMENT', 'the presentation part (ppt/presentation.xml) is missing');
  const rels = readRelationships(zip, 'ppt/_rels/presentation.xml.rels', 'ppt');
  const ordered: string[] = [];
  parseXmlPart(zip, 'ppt/presentation.xml', {
    open(tag) {
      if (localName(tag.name) !== 'sldId') return;
      const rid = tag.attributes['r:id'];
      const part = rid ? rels.get(rid) : undefined;
      if (part && zip.has(part)) ordered.push(part);
    },
  });
  if (ordered.length > 0) return ordered;
  // No usable slide list: fall back to the slide parts in numeric order.
  return zip
    .names()
    .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)?.[1]) - Number(/(\d+)\.xml$/.exec(b)?.[1]));
}

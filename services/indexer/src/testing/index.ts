export { buildPdf, type PdfOptions } from './pdf.js';
export { buildDocx, buildXlsx, buildLargeXlsx, buildPptx, buildZipBomb, patchDeclaredSize, type DocxBlock, type SheetSpec } from './office.js';

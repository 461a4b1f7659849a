// htm bound to Preact: JSX-like templates as tagged template literals, nothing to compile.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);

/**
 * Builds the React renderer (renderer/) into dist/renderer: static files that Electron loads from
 * disk and the browser bridge serves at `/`. Relative asset URLs (`base: './'`) so both work, and
 * no inline scripts (no module-preload polyfill), so the page runs under a strict CSP.
 * Runs on: Node (build tool).
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
  },
});

// SPDX-License-Identifier: Apache-2.0
// The dashboard is served by vigil-fleet from assets embedded in the binary: relative to "/",
// no CDN, everything bundled.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    outDir: process.env.VIGIL_WEB_OUT_DIR || 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});

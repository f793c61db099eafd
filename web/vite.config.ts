import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard builds into dist/dashboard, which the control role serves at `/`
// (control-api/platform/http/dashboard.ts); scripts/build-dist.mjs runs this build after tsc.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // One small app: a single chunk loads in one request.
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});

import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev:web` works on the console against a running service (LOUPE_API_URL, default
// http://127.0.0.1:3000); the built files are served by the service itself.
const api = process.env.LOUPE_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false, chunkSizeWarningLimit: 1200 },
  server: {
    host: '127.0.0.1',
    port: Number(process.env.PORT ?? 5173),
    proxy: Object.fromEntries(['/api', '/healthz', '/openapi.json', '/docs'].map((p) => [p, { target: api, changeOrigin: false }])),
  },
});

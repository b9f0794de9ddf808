// Builds the viewer into the Python package, which serves it (roadsim/viewer/static/).
import { defineConfig } from "vitest/config";

export default defineConfig({
  base: "./",
  build: {
    outDir: "../src/roadsim/viewer/static",
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
  test: {
    include: ["tests/**/*.test.ts"],
    environment: "node",
  },
});

import { prepareGloveAsset } from './glove-asset';

/**
 * Pre-generates the GloVe asset (e.g. in a Docker build, so the first request does not pay ~3 s):
 *   node dist/libs/embeddings/src/prepare-glove-asset.main.js [cacheDir]
 */
async function main(): Promise<void> {
  const started = Date.now();
  const path = await prepareGloveAsset({ cacheDir: process.argv[2] });
  console.log(`GloVe asset ready at ${path} (${Date.now() - started} ms)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

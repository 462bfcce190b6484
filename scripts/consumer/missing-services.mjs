// The services' packages are optional peers of axon-rag, not installed with it: using a service whose package the
// application lacks must fail with DEPENDENCY_MISSING naming the package and the command that installs it.
// Run by scripts/consumer-check.sh in an app that installed only the tarball (no network is used: each call fails
// before any request, at loading the package).
import { OpenAIChat } from 'axon-rag/providers';
import { PgVectorStore, QdrantStore } from 'axon-rag/stores';

const uses = [
  ['openai', () => new OpenAIChat({ baseURL: 'http://127.0.0.1:9/v1' }).complete([{ role: 'user', content: 'hello' }])],
  ['pg', () => new PgVectorStore({ url: 'postgres://axon@127.0.0.1:9/axon' }).count()],
  ['@qdrant/js-client-rest', () => new QdrantStore({ url: 'http://127.0.0.1:9', collection: 'axon' }).count()],
];
let failed = false;
for (const [packageName, use] of uses) {
  try {
    await use();
    console.log(`${packageName}: no error, although the package is not installed`);
    failed = true;
  } catch (error) {
    const named = error?.code === 'DEPENDENCY_MISSING' && String(error.fix).includes(`npm install ${packageName}`);
    console.log(`${packageName}: ${error?.code} ${error?.message}${named ? '' : '  <- the package to install is not named'}`);
    if (!named) failed = true;
  }
}
process.exit(failed ? 1 : 0);

// A bare Fastify — a hello-world GET and a JSON POST that only parses its body — the reference points of ingest.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.post<{ Body: { projectId: string } }>('/subscribers', async (request, reply) => {
  reply.code(201);
  return { id: 'sub_bare', token: 'st_bare', projectId: request.body.projectId, status: 'active' };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });

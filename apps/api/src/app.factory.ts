import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import pino from 'pino';
import multipart from '@fastify/multipart';
import { registerMultipartRouteCheck, UPLOAD_LIMITS } from './http/multipart';
import { AppModule } from './app.module';
import { API_VERSION, type AppConfig } from '@crs/config';
import { cacheUsage, Metrics } from './health/metrics';
import { invalid } from '@crs/domain/errors';
import { jsonInputProblem } from '@crs/domain/nul-character';
import { registerAuthHook } from './http/auth.hook';
import { sendError } from './http/exception.filter';
import { errorEnvelope } from './http/envelope';
import { API_KEYS, BLOB_STORE, INDEXING_PIPELINE, openPlatform, type Platform, PROJECTION_RUNNER, QUERY_STEP_CLOCK, SEARCH_INDEX } from '@crs/platform';

export interface CreatedApp {
  app: NestFastifyApplication;
  platform: Platform;
  close(): Promise<void>;
}

/** Largest JSON body accepted (multipart uploads have their own limits). */
export const JSON_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * A connection whose bytes Node's HTTP parser refuses gets an answer in the envelope, then is closed (Fastify's default
 * answered `{"error":"Bad Request","message":"Client Error"}`): 431 for headers past Node's limit, 408 for a request
 * that did not arrive in time, 400 for anything else that is not HTTP.
 */
export function clientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', `The request headers are larger than the ${Math.round(maxHeaderSize / 1024)} KiB the server reads.`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time.']
        : [400, 'INVALID_INPUT', `The request is not valid HTTP/1.1 (${(error as { reason?: string }).reason ?? error.code ?? 'unreadable'}).`];
  const body = JSON.stringify(errorEnvelope({ requestId: randomUUID(), startedAt: process.hrtime.bigint(), deprecations: [], scope: {} }, code, message));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

/** Builds the API (and, in single-node mode, the worker) on top of an opened platform. */
export async function createApp(config: AppConfig): Promise<CreatedApp> {
  const logger = pino({ level: config.logLevel, base: { service: 'crs' } });
  const platform = await openPlatform(config, {
    info: (o, m) => logger.info(o, m),
    error: (o, m) => logger.error(o, m),
  });
  const pipeline = platform.get(INDEXING_PIPELINE);
  const queryClock = platform.get(QUERY_STEP_CLOCK);
  const blobs = platform.get(BLOB_STORE);
  const searchIndex = platform.get(SEARCH_INDEX);
  const metrics = new Metrics(platform.get(PROJECTION_RUNNER), () => pipeline.queueDepth(), () => pipeline.stepTimes(), () => queryClock.times(), () => cacheUsage(blobs, searchIndex));
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    // Our onResponse hook logs requests; Fastify's per-request lines stay off. Log lines carry request_id.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => randomUUID(),
    bodyLimit: JSON_BODY_LIMIT,
    // A path parameter holds an item id of up to 256 characters (Fastify's default, 100, answered 414 outside the
    // envelope for longer ids, so their metadata and ACL could not be edited).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // A connection silent for 2 minutes (a body that stops arriving) is closed; Fastify's default kept it open for ever.
    // An idle bound, not a total one: a large upload on a slow link keeps going as long as bytes arrive.
    connectionTimeout: 120_000,
    // Fastify's own early errors (a malformed percent-encoding in the path, ...) in the envelope too.
    frameworkErrors: (error: unknown, req: FastifyRequest, reply: FastifyReply) => sendError(req, reply, error),
    // And what Node's HTTP parser refuses before there is a request (oversized headers, broken framing).
    clientErrorHandler: clientError,
  } as any);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forPlatform(platform, metrics), adapter, { logger: ['error', 'warn'], bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance();

  registerAuthHook(fastify, platform.get(API_KEYS));
  await fastify.register(multipart as any, { limits: { fileSize: UPLOAD_LIMITS.fileBytes, files: UPLOAD_LIMITS.files } });
  registerMultipartRouteCheck(fastify);
  // JSON endpoints take JSON: a text/plain body is 415 (Fastify's default parser would hand the handler a string).
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('onResponse', async (req, reply) => {
    const route = (req as any).routeOptions?.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500 || config.logLevel === 'debug') {
      req.log.info({ method: req.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    }
  });
  // Bodiless POST/DELETE with a JSON content type (or none) must not fail before the handler.
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      const err = new Error(`Body is not valid JSON: ${(e as Error).message}`) as Error & { statusCode: number };
      err.statusCode = 400;
      return done(err, undefined);
    }
    const problem = jsonInputProblem(parsed, 'body');
    if (problem) return done(invalid(problem), undefined);
    done(null, parsed);
  });

  const doc = new DocumentBuilder()
    .setTitle('Context Retrieval Service')
    .setDescription('Stores context (knowledge, memories) and returns the most relevant context for a query. Every response of /query, /context/*, /databases and /feedback is wrapped in the envelope {success, data, error, meta}.')
    .setVersion(API_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: '<prefix>.<secret>' })
    .addGlobalParameters({ name: 'API-Version', in: 'header', required: false, schema: { type: 'string', default: '2' } })
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc));

  await app.init();
  await fastify.ready();
  if (config.worker) platform.startWorker();

  return {
    app,
    platform,
    async close() {
      await app.close();
      await platform.close();
    },
  };
}

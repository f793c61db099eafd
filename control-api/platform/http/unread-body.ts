import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';

/**
 * Reads and discards what is left of a request body, up to `limitBytes`. Resolves true once the
 * body has ended, false when it went over the limit or the connection went away (Node's request
 * timeout bounds the time this can take).
 */
export function discardRest(req: IncomingMessage, limitBytes: number): Promise<boolean> {
  if (req.complete || req.readableEnded) return Promise.resolve(true);
  if (req.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (drained: boolean): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      if (!drained) req.pause();
      resolve(drained);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > limitBytes) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(req.complete);
    const onError = (): void => finish(false);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onError);
    req.resume();
  });
}

/**
 * An answer given before the body was read (413 at the size limit, 415, 401, 404...) must still
 * reach a client that is busy uploading: closing with unread bytes makes the kernel reset the
 * connection, and clients such as Node's fetch then report EPIPE instead of the answer. So the
 * rest of the upload is read and discarded before the answer goes out, up to `limitBytes`
 * (config `http.drainLimitBytes`); beyond that the answer says `Connection: close` and the
 * connection is given up. Mount outermost, outside the error handler.
 */
export function drainUnreadBody(limitBytes: number): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      if (!(await discardRest(ctx.req, limitBytes))) ctx.set('Connection', 'close');
    }
  };
}

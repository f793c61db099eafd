import { createSocket, type Socket } from 'node:dgram';
import { AppError } from '../../core/errors.js';

/**
 * RTP port pool: each lease is an even RTP port with the next odd port reserved for RTCP
 * (RFC 3550 sec. 11). Ports are handed out round-robin so a just-released port is not reused at
 * once (late packets of the previous call would otherwise land in the next one).
 */
export interface RtpPortPoolOptions {
  /** Address the sockets bind to. */
  readonly host: string;
  readonly minPort: number;
  readonly maxPort: number;
  /** Also bind the RTCP port (so nothing else can take it); incoming RTCP is read and discarded. */
  readonly bindRtcp?: boolean;
  /** Receive buffer per socket; the default kernel buffer can overflow when one process carries many calls. */
  readonly receiveBufferBytes?: number;
}

export interface RtpPortLease {
  readonly port: number;
  readonly socket: Socket;
  release(): Promise<void>;
}

export class RtpPortsExhaustedError extends AppError {
  constructor(minPort: number, maxPort: number) {
    super('resource_exhausted', `no free RTP port in ${minPort}-${maxPort}`, { retryable: true });
    this.name = 'RtpPortsExhaustedError';
  }
}

function bind(host: string, port: number, receiveBufferBytes: number | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // ipv6Only: an IPv6 pool on `::` must not take the IPv4 pool's ports as well.
    const socket = host.includes(':') ? createSocket({ type: 'udp6', ipv6Only: true }) : createSocket({ type: 'udp4' });
    const onError = (error: Error): void => {
      socket.close();
      reject(error);
    };
    socket.once('error', onError);
    socket.bind(port, host, () => {
      socket.off('error', onError);
      if (receiveBufferBytes) {
        try {
          socket.setRecvBufferSize(receiveBufferBytes);
        } catch {
          // The kernel caps it (net.core.rmem_max); the default still works.
        }
      }
      resolve(socket);
    });
  });
}

function closeSocket(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });
}

export class RtpPortPool {
  private readonly inUse = new Set<number>();
  private readonly first: number;
  private readonly slots: number;
  private cursor = 0;

  constructor(private readonly options: RtpPortPoolOptions) {
    this.first = options.minPort % 2 === 0 ? options.minPort : options.minPort + 1;
    // The last usable RTP port must leave room for its RTCP port within the range.
    this.slots = Math.max(0, Math.floor((options.maxPort - this.first - 1) / 2) + 1);
    if (this.first + 1 > options.maxPort) this.slots = 0;
  }

  get capacity(): number {
    return this.slots;
  }

  get leased(): number {
    return this.inUse.size;
  }

  async allocate(): Promise<RtpPortLease> {
    for (let attempt = 0; attempt < this.slots; attempt++) {
      const port = this.first + ((this.cursor + attempt) % this.slots) * 2;
      if (this.inUse.has(port)) continue;
      this.inUse.add(port);
      let socket: Socket | undefined;
      let rtcp: Socket | undefined;
      try {
        socket = await bind(this.options.host, port, this.options.receiveBufferBytes);
        if (this.options.bindRtcp ?? true) {
          rtcp = await bind(this.options.host, port + 1, undefined);
          rtcp.on('message', () => undefined);
        }
      } catch {
        // Taken by another process: skip it and keep looking.
        if (socket) await closeSocket(socket);
        this.inUse.delete(port);
        continue;
      }
      this.cursor = (this.cursor + attempt + 1) % this.slots;
      const rtpSocket = socket;
      let released = false;
      return {
        port,
        socket: rtpSocket,
        release: async () => {
          if (released) return;
          released = true;
          await Promise.all([closeSocket(rtpSocket), rtcp ? closeSocket(rtcp) : Promise.resolve()]);
          this.inUse.delete(port);
        },
      };
    }
    throw new RtpPortsExhaustedError(this.options.minPort, this.options.maxPort);
  }
}

import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely';

/**
 * Embedded PGlite runs PostgreSQL in WebAssembly on the event loop's own thread, and each query
 * resolves through promises only: a run of queries (one transaction after another, as a burst of
 * campaign calls makes) never gives the loop back to I/O. Measured during a burst of 400 calls:
 * the loop was held for 1.2 to 2.7 s at a time, so SIP responses waited unread and every INVITE
 * was retransmitted two or three times (RFC 3261 Timer A: 500 ms, 1 s, 2 s). This driver lets
 * pending I/O run (setImmediate comes after the poll phase) before each connection is taken, i.e.
 * between transactions and between standalone queries; a transaction itself is not interrupted.
 */
export function yieldingToIo(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new IoYieldingDriver(dialect.createDriver()),
  };
}

const nextIoTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class IoYieldingDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await nextIoTurn();
    return this.inner.acquireConnection();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

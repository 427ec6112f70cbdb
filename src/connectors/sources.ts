export { file } from './file-source.js';
export { jetstreamSource as jetstream } from './jetstream-source.js';
export { log } from './log-source.js';
export { nexmark } from './nexmark/nexmark-source.js';
export { postgresSource as postgres } from './postgres-source.js';
export { redisStreamSource as redisStream } from './redis-stream-source.js';
export { sequence } from './sequence-source.js';

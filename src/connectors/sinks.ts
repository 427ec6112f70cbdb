export { collect } from './collect-sink.js';
export { custom } from './custom-sink.js';
export { discard } from './discard-sink.js';
export { file } from './file-sink.js';
export { jetstreamSink as jetstream } from './jetstream-sink.js';
export { log } from './log-sink.js';
export { postgres } from './postgres-sink.js';
export { redisStreamSink as redisStream } from './redis-stream-sink.js';
export { stdout } from './stdout-sink.js';

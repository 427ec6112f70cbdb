// Built-in connectors, exposed as the `sources` and `sinks` namespaces.

export * as sinks from './sinks.js';
export * as sources from './sources.js';

// Package flowcontrol is API Priority and Fairness, upstream's
// replacement for the max-in-flight limit: every request is classified by
// the FlowSchemas into a priority level and a flow, and each level shares
// its seats among its flows by fair queuing, so a single noisy user cannot
// take more than its share while others wait.
//
// The pieces, from pure to wired:
//
//   - classify.go matches a request against FlowSchemas (subjects,
//     resource and non-resource rules) and names its flow (ByUser,
//     ByNamespace);
//   - config.go digests the API objects into levels, each with its share
//     of the server's concurrency limit, and the Dangling conditions the
//     FlowSchemas should carry;
//   - alloc.go moves seats from levels that do not use them to those that
//     do, every 10 seconds, as upstream's borrowing does;
//   - fairqueue (a package of its own) queues and dispatches the requests
//     of one level;
//   - dispatcher.go admits requests, blocking while they wait, and
//     keeps the metrics;
//   - controller.go follows the API objects through informers and writes
//     the FlowSchemas' status; ensure.go creates and maintains upstream's
//     bootstrap objects.
//
// The HTTP filter that uses a Dispatcher lives with the API server.
package flowcontrol

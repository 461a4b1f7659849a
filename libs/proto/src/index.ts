/**
 * The wire contract: messages generated from proto/agentloop/v1 by
 * scripts/gen-proto.sh (protobuf-es), plus helpers to map errors.
 */
export { create, clone, toBinary, fromBinary, toJson, fromJson } from '@bufbuild/protobuf';
export { ErrorSchema, type Error as WireError } from './gen/agentloop/v1/common_pb.js';
export {
  ToolMetadataSchema,
  ToolSpecSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  WorkspaceRequestSchema,
  WorkspaceRequest_Action,
  WorkspaceResponseSchema,
  ReloadToolsRequestSchema,
  ReloadToolsResponseSchema,
  SkippedToolModuleSchema,
  ToolRunner,
  type ToolMetadata,
  type ToolSpec,
  type ListToolsRequest,
  type ListToolsResponse,
  type ExecuteToolRequest,
  type ExecuteToolResponse,
  type WorkspaceRequest,
  type WorkspaceResponse,
  type ReloadToolsRequest,
  type ReloadToolsResponse,
  type SkippedToolModule,
} from './gen/agentloop/v1/tools_pb.js';
export {
  RunJobSchema,
  DelegationSchema,
  RunEventSchema,
  WebhookJobSchema,
  RunOutcomeSchema,
  RunStatus,
  type RunJob,
  type Delegation,
  type RunEvent,
  type WebhookJob,
  type RunOutcome,
} from './gen/agentloop/v1/runs_pb.js';
export { toWireError, fromWireError, runStatusName, runStatusFromName, type RunStatusName } from './errors.js';
export {
  DocumentKind,
  ReadDocumentRequestSchema,
  ReadDocumentResponseSchema,
  SearchDocumentRequestSchema,
  SearchDocumentResponseSchema,
  SearchMatchSchema,
  Indexer,
  type ReadDocumentRequest,
  type ReadDocumentResponse,
  type SearchDocumentRequest,
  type SearchDocumentResponse,
  type SearchMatch,
} from './gen/agentloop/v1/indexer_pb.js';

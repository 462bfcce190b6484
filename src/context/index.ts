export {
  checkEligibility,
  defaultPiiRedactor,
  eligibilityFilter,
  expiresAt,
  REDACTION_CLASSES,
  TRUST_LEVELS,
  type CallerContext,
  type EligibilityDecision,
  type EligibilityPolicy,
  type RedactionClass,
  type Redactor,
  type TrustLevel,
} from './eligibility.ts';
export { ContextBuilder, DATA_RULES, type ContextBuilderOptions, type ConversationInput, type MemoryInput, type ToolResultInput } from './builder.ts';
export { CONVERSATION_RULES, conversationBlocks, formatConversation, withoutCitationMarkers, type ConversationBlock } from './conversation-format.ts';
export {
  INSTRUCTION_KINDS,
  MESSAGE_OVERHEAD_TOKENS,
  orderSections,
  renderMessages,
  SECTION_ORDER,
  type ContextBudget,
  type ContextPacket,
  type ContextSection,
  type Degradation,
  type OmissionReason,
  type OmittedRef,
  type SectionKind,
} from './packet.ts';
export { estimateTokenizer, type Tokenizer } from './tokens.ts';
export { detectConflicts, findSuperseded, uncitedSentences, type ContractStatus, type EvidenceConflict } from './contract.ts';
export {
  diffTraces,
  hashConfiguration,
  isAgenticTrace,
  JsonlTraceStore,
  type JsonlTraceStoreOptions,
  stableHash,
  type PipelineVersion,
  type StoredAgenticResult,
  type StoredAgenticTrace,
  type StoredCaller,
  type StoredRun,
  type StoredTrace,
  type TraceDifference,
  type TraceStore,
} from './trace-store.ts';
export { EVIDENCE_RULES, neutralizeTagLookAlikes } from './evidence.ts';

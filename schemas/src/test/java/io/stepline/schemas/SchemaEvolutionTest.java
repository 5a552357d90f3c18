package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;

class SchemaEvolutionTest {

    @Test
    void recordWrittenWithPreviousStepSchemaIsReadByCurrentOne() throws IOException {
        List<Schema> history = SchemaHistory.olderVersionsOf(StepRecord.getClassSchema().getFullName());
        assertThat(history).hasSize(2);
        Schema v1 = history.get(0);
        assertThat(v1.getField("decode_context_tokens")).isNull();
        assertThat(fingerprint(v1)).isNotEqualTo(fingerprint(StepRecord.getClassSchema()));

        // an older producer writes with v1, knowing nothing of the newer optional fields
        GenericRecord old = new GenericData.Record(v1);
        for (Schema.Field f : v1.getFields()) {
            if (f.hasDefaultValue()) {
                old.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        old.put("instance_id", "old-producer");
        old.put("role", new GenericData.EnumSymbol(v1.getField("role").schema(), "DECODE"));
        old.put("step_id", 7L);
        old.put("start_unix_nano", 100L);
        old.put("end_unix_nano", 200L);
        old.put("latency_ns", 100L);
        old.put("latency_source", new GenericData.EnumSymbol(v1.getField("latency_source").schema(), "NEXT_STEP_INTERVAL"));
        for (String f : List.of("running_depth", "waiting_depth", "num_prefill_reqs", "num_decode_reqs", "scheduled_tokens",
                "prefill_tokens", "decode_tokens", "num_finished", "num_preempted")) {
            old.put(f, 3);
        }
        old.put("kv_usage_gpu_ratio", 0.5);
        old.put("kv_blocks_total_gpu", 100L);
        old.put("kv_blocks_free_gpu", 50L);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();

        StepRecord current = EventSerdes.STEP.decode(bytes);
        assertThat(current.getInstanceId()).isEqualTo("old-producer");
        assertThat(current.getRole()).isEqualTo(InstanceRole.DECODE);
        assertThat(current.getLatencySource()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL);
        assertThat(current.getStepId()).isEqualTo(7L);
        assertThat(current.getDecodeTokens()).isEqualTo(3);
        assertThat(current.getDecodeContextTokens()).isNull();
        assertThat(current.getTpSize()).isNull();
    }

    @Test
    void stepWrittenWithVersion2RequiredCountersReadsWithTheirValuesAndNothingDegraded() throws IOException {
        Schema v2 = SchemaHistory.olderVersionsOf(StepRecord.getClassSchema().getFullName()).get(1);
        assertThat(v2.getField("kv_blocks_total_gpu").schema().getType()).isEqualTo(Schema.Type.LONG);
        assertThat(v2.getField("degraded")).isNull();
        GenericRecord old = new GenericData.Record(v2);
        for (Schema.Field f : v2.getFields()) {
            if (f.hasDefaultValue()) {
                old.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        old.put("instance_id", "v2-producer");
        old.put("step_id", 9L);
        old.put("start_unix_nano", 100L);
        old.put("end_unix_nano", 200L);
        old.put("latency_ns", 100L);
        fill(old, v2);
        old.put("running_depth", 5);
        old.put("kv_usage_gpu_ratio", 0.25);
        old.put("kv_blocks_total_gpu", 400L);
        old.put("kv_blocks_free_gpu", 300L);
        StepRecord current = EventSerdes.STEP.decode(new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old).array());
        assertThat(current.getRunningDepth()).isEqualTo(5);
        assertThat(current.getKvUsageGpuRatio()).isEqualTo(0.25);
        assertThat(current.getKvBlocksTotalGpu()).isEqualTo(400L);
        assertThat(current.getKvBlocksFreeGpu()).isEqualTo(300L);
        assertThat(current.getDegraded()).isEmpty();
    }

    @Test
    void deadLetterWrittenBeforeInstanceIdReadsWithANullInstance() throws IOException {
        Schema v1 = onlyOlderVersionWithout(io.stepline.events.DeadLetter.getClassSchema(), "instance_id");
        GenericRecord old = new GenericData.Record(v1);
        old.put("source", "otlp-http");
        old.put("reason_code", "MISSING_ATTRIBUTE");
        old.put("reason", "no step.id");
        old.put("received_unix_nano", 5L);
        old.put("payload", java.nio.ByteBuffer.wrap(new byte[] {1, 2}));
        io.stepline.events.DeadLetter current = EventSerdes.DEAD_LETTER.decode(new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array());
        assertThat(current.getReasonCode()).isEqualTo("MISSING_ATTRIBUTE");
        assertThat(current.getInstanceId()).isNull();
    }

    @Test
    void requestEventWrittenBeforeApiEventsReadsWithoutInferenceTime() throws IOException {
        Schema v1 = onlyOlderVersionWithout(io.stepline.events.RequestEvent.getClassSchema(), "inference_s");
        assertThat(v1.getField("kind").schema().getEnumSymbols()).doesNotContain("API_ARRIVED");
        GenericRecord old = new GenericData.Record(v1);
        for (Schema.Field f : v1.getFields()) {
            if (f.hasDefaultValue()) {
                old.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        old.put("instance_id", "vllm-0");
        old.put("request_id", "req-1");
        old.put("kind", new GenericData.EnumSymbol(v1.getField("kind").schema(), "LLM_REQUEST"));
        old.put("time_unix_nano", 7L);
        old.put("ttft_s", 0.25);
        io.stepline.events.RequestEvent current = EventSerdes.REQUEST.decode(new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array());
        assertThat(current.getKind()).isEqualTo(io.stepline.events.RequestEventKind.LLM_REQUEST);
        assertThat(current.getTtftS()).isEqualTo(0.25);
        assertThat(current.getInferenceS()).isNull();
    }

    private static long fingerprint(Schema s) {
        return org.apache.avro.SchemaNormalization.parsingFingerprint64(s);
    }

    @Test
    void serdeWithoutHistoryRejectsOlderWriter() {
        Schema v1 = SchemaHistory.olderVersionsOf(StepRecord.getClassSchema().getFullName()).get(0);
        GenericRecord old = new GenericData.Record(v1);
        for (Schema.Field f : v1.getFields()) {
            if (f.hasDefaultValue()) {
                old.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        old.put("instance_id", "x");
        AvroSerde<StepRecord> noHistory = AvroSerde.of(StepRecord.class, List.of());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> noHistory.decode(
                        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(fill(old, v1)).array()))
                .isInstanceOf(org.apache.kafka.common.errors.SerializationException.class);
    }

    private static GenericRecord fill(GenericRecord r, Schema s) {
        r.put("role", new GenericData.EnumSymbol(s.getField("role").schema(), "MIXED"));
        r.put("latency_source", new GenericData.EnumSymbol(s.getField("latency_source").schema(), "STEP_SPAN"));
        for (Schema.Field f : s.getFields()) {
            if (r.get(f.name()) == null && f.schema().getType() == Schema.Type.INT) {
                r.put(f.name(), 0);
            } else if (r.get(f.name()) == null && f.schema().getType() == Schema.Type.LONG) {
                r.put(f.name(), 0L);
            } else if (r.get(f.name()) == null && f.schema().getType() == Schema.Type.DOUBLE) {
                r.put(f.name(), 0.0);
            }
        }
        return r;
    }

    @Test
    void rooflineHeaderWrittenBeforeTheBatchLevelIsReadWithAnEmptyOne() throws IOException {
        List<Schema> history = SchemaHistory.olderVersionsOf(io.stepline.events.RooflineStateHeader.getClassSchema().getFullName());
        assertThat(history).hasSize(17);
        Schema v1 = history.get(0);
        assertThat(v1.getField("batch_level")).isNull();
        assertThat(history.get(1).getField("latch_closed")).isNotNull();
        assertThat(history.get(1).getField("latch_onset_log")).isNull();
        GenericRecord old = new GenericData.Record(v1);
        old.put("steps_seen", 512L);
        old.put("steps_since_refit", 3);
        old.put("extrapolated_steps", 4L);
        old.put("beyond_steps", 1L);
        old.put("elevated_share", 0.05);
        old.put("level", 1.07);
        old.put("drift_current", java.nio.ByteBuffer.wrap(new byte[] {1, 2}));
        old.put("drift_current_tail_mask", java.nio.ByteBuffer.wrap(new byte[] {3}));
        old.put("drift_current_start_ns", 99L);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();

        io.stepline.events.RooflineStateHeader current = EventSerdes.ROOFLINE_STATE_HEADER.decode(bytes);
        assertThat(current.getStepsSeen()).isEqualTo(512L);
        assertThat(current.getLevel()).isEqualTo(1.07);
        assertThat(current.getBatchLevel()).isEmpty();
    }

    @Test
    void rooflineHeaderWrittenBeforeItCountedStepsSinceAKnownCellReadsAsAKnownCellJustSeen() throws IOException {
        Schema v3 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 2, "latch_surge", "steps_since_known");
        GenericRecord old = olderHeader(v3, 12_000L, 0.6);
        old.put("latch_surge", true);

        io.stepline.events.RooflineStateHeader current = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(v3, old));
        assertThat(current.getElevatedShare()).isEqualTo(0.6);
        assertThat(current.getLatchSurge()).isTrue();
        assertThat(current.getStepsSinceKnown()).isZero();
        assertThat(current.getLatchDropSteps()).isZero();
    }

    @Test
    void rooflineStateWrittenBeforeThePrefillShiftReadsWithAnEmptyOne() throws IOException {
        Schema header4 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 3, "steps_since_known", "prefill_current");
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header4, olderHeader(header4, 7_000L, 0.2)));
        assertThat(header.getStepsSeen()).isEqualTo(7_000L);
        assertThat(header.getPrefillCurrent().remaining()).isZero();
        assertThat(header.getPrefillCurrentSteps()).isZero();

        Schema fit3 = olderVersion(io.stepline.events.RooflineStateFit.getClassSchema(), 2, "drift_watch_blocks", "prefill_block_steps");
        GenericRecord oldFit = olderFit(fit3, 30L);
        oldFit.put("drift_block_elevated", List.of(4));
        oldFit.put("drift_block_median", List.of(1));
        oldFit.put("drift_block_start_ns", List.of(100L));
        oldFit.put("drift_block_level_rise", List.of(0));
        oldFit.put("drift_watch_blocks", 7);
        io.stepline.events.RooflineStateFit fit = EventSerdes.ROOFLINE_STATE_FIT.decode(written(fit3, oldFit));
        assertThat(fit.getDriftWatchBlocks()).isEqualTo(7);
        assertThat(fit.getPrefillBlockSteps()).isEmpty();
        assertThat(fit.getPrefillBlockStartNs()).isEmpty();
        assertThat(fit.getPrefillWatchBlocks()).isZero();
    }

    @Test
    void rooflineFitWrittenBeforeTheLightestDecodeBatchWasKeptReadsAsNoneKnown() throws IOException {
        Schema fit4 = olderVersion(io.stepline.events.RooflineStateFit.getClassSchema(), 3, "prefill_block_steps", "decode_tokens_min");
        GenericRecord old = olderFit(fit4, 41L);
        old.put("prefill_watch_blocks", 3);
        io.stepline.events.RooflineStateFit fit = EventSerdes.ROOFLINE_STATE_FIT.decode(written(fit4, old));
        assertThat(fit.getVersion()).isEqualTo(41L);
        assertThat(fit.getPrefillWatchBlocks()).isEqualTo(3);
        assertThat(fit.getDecodeTokensMin()).as("no lightest decode batch known until the next refit").isZero();
    }

    @Test
    void rooflineFitWrittenBeforeStandingReportsWereMarkedReadsAsAFollowedReport() throws IOException {
        Schema fit5 = olderVersion(io.stepline.events.RooflineStateFit.getClassSchema(), 4, "decode_tokens_min", "drift_reported_standing");
        GenericRecord old = olderFit(fit5, 52L);
        old.put("drift_reported_at_step", 9_000L);
        old.put("decode_tokens_min", 0.008);
        io.stepline.events.RooflineStateFit fit = EventSerdes.ROOFLINE_STATE_FIT.decode(written(fit5, old));
        assertThat(fit.getVersion()).isEqualTo(52L);
        assertThat(fit.getDriftReportedAtStep()).isEqualTo(9_000L);
        assertThat(fit.getDecodeTokensMin()).isEqualTo(0.008);
        assertThat(fit.getDriftReportedStanding()).as("the report's horizon holds as it did when written").isFalse();
    }

    @Test
    void rooflineFitWrittenBeforeTheLeastContextWasKeptReadsAsNoneKnown() throws IOException {
        Schema fit6 = olderVersion(io.stepline.events.RooflineStateFit.getClassSchema(), 5, "drift_reported_standing", "context_min");
        GenericRecord old = olderFit(fit6, 63L);
        old.put("drift_reported_standing", true);
        old.put("decode_tokens_min", 0.016);
        io.stepline.events.RooflineStateFit fit = EventSerdes.ROOFLINE_STATE_FIT.decode(written(fit6, old));
        assertThat(fit.getVersion()).isEqualTo(63L);
        assertThat(fit.getDriftReportedStanding()).isTrue();
        assertThat(fit.getDecodeTokensMin()).isEqualTo(0.016);
        assertThat(fit.getContextMin()).as("no pinned context known until the next refit").isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeThePrefillWitnessReadsAsNoWitnessYet() throws IOException {
        Schema header5 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 4, "prefill_current", "witness_step");
        GenericRecord old = olderHeader(header5, 8_000L, 0.1);
        old.put("prefill_current_steps", 12);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header5, old));
        assertThat(header.getPrefillCurrentSteps()).isEqualTo(12);
        assertThat(header.getWitnessStep()).as("no prefill-heavy step seen: the witness speaks for nothing").isEqualTo(-1L);
        assertThat(header.getContextDriftSteps()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeNovelWorkWasJudgedReadsAsNoStepHeld() throws IOException {
        Schema header6 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 5, "witness_step", "novel_held");
        GenericRecord old = olderHeader(header6, 9_500L, 0.2);
        old.put("witness_step", 9_400L);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header6, old));
        assertThat(header.getWitnessStep()).isEqualTo(9_400L);
        assertThat(header.getNovelHeld()).as("no step of new work held back").isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheLatchKeptThePrefillStepsCalmRatioOrTheSkippedStepsWereCountedReadsAsNeither() throws IOException {
        Schema header7 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 6, "novel_held", "latch_calm_prefill_log");
        GenericRecord old = olderHeader(header7, 9_800L, 0.3);
        old.put("novel_held", 2);
        old.put("latch_prefill_log", 0.25);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header7, old));
        assertThat(header.getNovelHeld()).isEqualTo(2);
        assertThat(header.getLatchPrefillLog()).isEqualTo(0.25);
        // 0: the prefill-heavy steps ran at the model before, what the latch assumed when it kept no baseline
        assertThat(header.getLatchCalmPrefillLog()).isZero();
        // no step reported yet that a sampled producer's count could have skipped
        assertThat(header.getPreviousStepId()).isEqualTo(-1L);
        assertThat(header.getSkippedSteps()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheRecentReportsWereKeptReadsAsNoBurst() throws IOException {
        Schema header8 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 7, "skipped_steps", "recent_reports");
        GenericRecord old = olderHeader(header8, 10_200L, 0.4);
        old.put("skipped_steps", 3L);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header8, old));
        assertThat(header.getSkippedSteps()).isEqualTo(3L);
        assertThat(header.getElevatedShare()).isEqualTo(0.4);
        // no step remembered as reported: new work keeps the extrapolation's bound until a burst is seen
        assertThat(header.getRecentReports()).isZero();
        assertThat(header.getBurstLog()).isZero();
        assertThat(header.getBurstHeld()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeKnownFlagsWereCountedReadsAsNoneInARow() throws IOException {
        Schema header9 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 8, "burst_held", "known_flags");
        GenericRecord old = olderHeader(header9, 12_000L, 0.9);
        old.put("recent_reports", 0b1111);
        old.put("burst_held", 5);
        old.put("steps_since_known", 2);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header9, old));
        assertThat(header.getRecentReports()).isEqualTo(0b1111);
        assertThat(header.getBurstHeld()).isEqualTo(5);
        assertThat(header.getStepsSinceKnown()).isEqualTo(2);
        // none in a row: new work keeps the extrapolation's bound (or the burst's) until known cells are flagged again
        assertThat(header.getKnownFlags()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheLastKnownStepWasKeptReadsAsAHealthyOne() throws IOException {
        Schema header10 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 9, "known_flags", "last_known_log");
        GenericRecord old = olderHeader(header10, 14_000L, 0.2);
        old.put("known_flags", 2);
        old.put("steps_since_known", 5);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header10, old));
        assertThat(header.getKnownFlags()).isEqualTo(2);
        assertThat(header.getStepsSinceKnown()).isEqualTo(5);
        // at the model: a burst in new work is doubted until the next step in known work says otherwise
        assertThat(header.getLastKnownLog()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheLatchKeptItsLastRunNearTheModelReadsAsNoRunYet() throws IOException {
        Schema header11 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 10, "last_known_log", "latch_last_near_run");
        GenericRecord old = olderHeader(header11, 15_000L, 0.3);
        old.put("latch_surge", true);
        old.put("latch_near_run", 2);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header11, old));
        assertThat(header.getLatchSurge()).isTrue();
        assertThat(header.getLatchNearRun()).isEqualTo(2);
        // no run counted yet: a jump ends the wait for the surge's end only after a run the restored latch has seen whole
        assertThat(header.getLatchLastNearRun()).isZero();
        assertThat(header.getLatchSinceNear()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheLatchReadItsSlowdownFromPrefillHeavyStepsReadsAsTheOnsetsMeasure() throws IOException {
        Schema header12 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 11, "latch_since_near", "latch_by_prefill");
        GenericRecord old = olderHeader(header12, 15_000L, 0.3);
        old.put("latch_closed", true);
        old.put("latch_onset_log", 0.25);
        old.put("latch_prefill_steps", 20);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header12, old));
        assertThat(header.getLatchClosed()).isTrue();
        assertThat(header.getLatchOnsetLog()).isEqualTo(0.25);
        assertThat(header.getLatchPrefillSteps()).isEqualTo(20);
        // the slowdown the episode was being learned net of when it was written: the onset's
        assertThat(header.getLatchByPrefill()).isFalse();
    }

    @Test
    void rooflineHeaderWrittenBeforeARunOfHealthyKnownStepsEndedAnEpisodeReadsAsNoRunYet() throws IOException {
        Schema header13 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 12, "latch_by_prefill", "healthy_known_run");
        GenericRecord old = olderHeader(header13, 16_000L, 0.6);
        old.put("known_flags", 1);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header13, old));
        assertThat(header.getElevatedShare()).isEqualTo(0.6);
        assertThat(header.getKnownFlags()).isEqualTo(1);
        // the episode ends as it would have: by the share, or by a run counted from the restore on
        assertThat(header.getHealthyKnownRun()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeNewWorkWasJudgedAlongAChainReadsAsNoChain() throws IOException {
        Schema header14 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 13, "healthy_known_run", "chain_active");
        GenericRecord old = olderHeader(header14, 16_000L, 0.6);
        old.put("healthy_known_run", 3);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header14, old));
        assertThat(header.getHealthyKnownRun()).isEqualTo(3);
        // new work after the restore is judged as before the chain: a chain starts only right after slow known work
        assertThat(header.getChainActive()).isFalse();
        assertThat(header.getChainErrorLog()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeALatchCouldResumeItsEpisodeReadsAsNoneToResume() throws IOException {
        Schema header15 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 14, "chain_error_log", "latch_resume_steps");
        GenericRecord old = olderHeader(header15, 16_000L, 0.6);
        old.put("latch_drop_steps", 4);
        old.put("chain_active", true);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header15, old));
        assertThat(header.getLatchDropSteps()).isEqualTo(4);
        assertThat(header.getChainActive()).isTrue();
        // the next closing of the latch is a new episode, measured at its onset, as before the field
        assertThat(header.getLatchResumeSteps()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeOwnReportsWereCountedReadsAsNoneLately() throws IOException {
        Schema header16 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 15, "latch_resume_steps", "steps_since_own_report");
        GenericRecord old = olderHeader(header16, 16_000L, 0.6);
        old.put("latch_resume_steps", 9);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header16, old));
        assertThat(header.getLatchResumeSteps()).isEqualTo(9);
        // new work in a burst is flagged as the burst's only when near its slowdown until a step over its own bound comes
        assertThat(header.getStepsSinceOwnReport()).isEqualTo(1024);
    }

    @Test
    void rooflineHeaderWrittenBeforeThePrefillHeavyStepsCouldCloseTheLatchReadsAsNoJumpOfTheirs() throws IOException {
        Schema header17 = olderVersion(io.stepline.events.RooflineStateHeader.getClassSchema(), 16, "steps_since_own_report", "latch_prefill_flags");
        GenericRecord old = olderHeader(header17, 17_000L, 0.5);
        old.put("steps_since_own_report", 12);
        old.put("latch_closed", true);
        io.stepline.events.RooflineStateHeader header = EventSerdes.ROOFLINE_STATE_HEADER.decode(written(header17, old));
        assertThat(header.getStepsSinceOwnReport()).isEqualTo(12);
        assertThat(header.getLatchClosed()).isTrue();
        // an episode under way began as before the fields (its steps end it, not only the prefill-heavy ones), and the
        // prefill-heavy steps' jump is read from flags and means that start at none and at the model
        assertThat(header.getLatchPrefillOnset()).isFalse();
        assertThat(header.getLatchPrefillFlags()).isZero();
        assertThat(header.getLatchPrefillShortLog()).isZero();
        assertThat(header.getLatchPrefillBaseLog()).isZero();
    }

    @Test
    void rooflineHeaderWrittenBeforeTheLatchMeasuredItsOnsetReadsAsAnOnsetNotYetMeasured() throws IOException {
        Schema v2 = SchemaHistory.olderVersionsOf(io.stepline.events.RooflineStateHeader.getClassSchema().getFullName()).get(1);
        GenericRecord old = olderHeader(v2, 9_000L, 0.4);
        old.put("latch_closed", true);
        old.put("latch_steps", 40);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old).array();

        io.stepline.events.RooflineStateHeader current = EventSerdes.ROOFLINE_STATE_HEADER.decode(bytes);
        assertThat(current.getLatchClosed()).isTrue();
        assertThat(current.getLatchSteps()).isEqualTo(40);
        assertThat(current.getLatchOnsetSteps()).isZero();
        assertThat(current.getLatchOnsetLog()).isZero();
    }

    @Test
    void rooflineFitWrittenBeforeDriftBlocksKeptTheLevelsRiseReadsWithNone() throws IOException {
        List<Schema> history = SchemaHistory.olderVersionsOf(io.stepline.events.RooflineStateFit.getClassSchema().getFullName());
        assertThat(history).hasSize(6);
        Schema v1 = history.get(0);
        assertThat(v1.getField("drift_block_level_rise")).isNull();
        GenericRecord old = olderFit(v1, 12L);
        old.put("drift_block_elevated", List.of(4, 90));
        old.put("drift_block_median", List.of(1, 20));
        old.put("drift_block_start_ns", List.of(100L, 200L));
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();

        io.stepline.events.RooflineStateFit current = EventSerdes.ROOFLINE_STATE_FIT.decode(bytes);
        assertThat(current.getDriftBlockMedian()).containsExactly(1, 20);
        assertThat(current.getDriftBlockStartNs()).containsExactly(100L, 200L);
        assertThat(current.getDriftBlockLevelRise()).isEmpty();
        assertThat(current.getDriftReportedAtStep()).as("no regression reported yet").isEqualTo(-1L);
    }

    @Test
    void rooflineFitWrittenBeforeAlarmsCouldBeUndoneReadsAsNoAlarmWatched() throws IOException {
        Schema v2 = SchemaHistory.olderVersionsOf(io.stepline.events.RooflineStateFit.getClassSchema().getFullName()).get(1);
        assertThat(v2.getField("drift_block_level_rise")).isNotNull();
        assertThat(v2.getField("drift_watch_blocks")).isNull();
        GenericRecord old = olderFit(v2, 30L);
        old.put("drift_reported_at_step", 8_000L);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old).array();

        io.stepline.events.RooflineStateFit current = EventSerdes.ROOFLINE_STATE_FIT.decode(bytes);
        assertThat(current.getDriftReportedAtStep()).isEqualTo(8_000L);
        assertThat(current.getDriftWatchBlocks()).isZero();
        assertThat(current.getDriftWatchShiftLog()).isZero();
    }

    @Test
    void rooflineWrittenBeforeTheModelCountedItsUnjudgedStepsReadsWithNoCounts() throws IOException {
        // stepline.rooflines is compacted: an instance's last model before an upgrade stays on it
        Schema v1 = onlyOlderVersionWithout(io.stepline.events.RooflineModel.getClassSchema(), "extrapolated_steps");
        GenericRecord old = new GenericData.Record(v1);
        old.put("instance_id", "i-1");
        old.put("model_kind", "robust");
        old.put("version", 12L);
        old.put("fitted_at_unix_nano", 5L);
        old.put("steps_seen", 3_000L);
        old.put("feature_names", List.of("intercept"));
        old.put("coefficients", List.of(2.0e6));
        old.put("intercept_ns", 2.0e6);
        old.put("bound_ratio", 1.3);

        io.stepline.events.RooflineModel current = EventSerdes.ROOFLINE.decode(written(v1, old));
        assertThat(current.getStepsSeen()).isEqualTo(3_000L);
        assertThat(current.getDriftRatio()).isNull();
        assertThat(current.getExtrapolatedSteps()).as("not counted by that model").isNull();
        assertThat(current.getBeyondSteps()).isNull();
        assertThat(current.getContextDriftSteps()).isNull();
    }

    @Test
    void anomalyWrittenBeforeTheDetectorLearnedPhaseBaselinesReadsWithAnEmptyOne() throws IOException {
        Schema v1 = olderVersion(io.stepline.events.Anomaly.getClassSchema(), 0, "step", "phase_baseline_ns");
        // self-contained: the step record it carries is written out in it, not named
        assertThat(v1.getField("step").schema().getTypes().get(1).getField("phases")).isNotNull();
        GenericRecord old = olderAnomaly(v1, "old-detector/42", "OUTLIER", "HIGH", 42L, 3.0);
        old.put("latency_ns", 300L);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();

        io.stepline.events.Anomaly current = EventSerdes.ANOMALY.decode(bytes);
        assertThat(current.getAnomalyId()).isEqualTo("old-detector/42");
        assertThat(current.getStepId()).isEqualTo(42L);
        assertThat(current.getDeviationRatio()).isEqualTo(3.0);
        assertThat(current.getPhaseBaselineNs()).as("no phase evidence from an older detector").isEmpty();
    }

    @Test
    void anomalyWrittenBeforeRegressionsStandingAtTheInputsEndReadsAsNoneOfThem() throws IOException {
        Schema v2 = olderVersion(io.stepline.events.Anomaly.getClassSchema(), 1, "phase_baseline_ns", "at_input_end");
        assertThat(SchemaHistory.olderVersionsOf(io.stepline.events.Anomaly.getClassSchema().getFullName())).hasSize(2);
        GenericRecord old = olderAnomaly(v2, "i-1/drift/7000", "SUSTAINED_REGRESSION", "MEDIUM", 7_000L, 1.3);

        io.stepline.events.Anomaly current = EventSerdes.ANOMALY.decode(written(v2, old));
        assertThat(current.getKind()).isEqualTo(io.stepline.events.AnomalyKind.SUSTAINED_REGRESSION);
        assertThat(current.getDeviationRatio()).isEqualTo(1.3);
        assertThat(current.getAtInputEnd()).as("an older detector reported only regressions that filled its window").isFalse();
    }

    /** An anomaly of an older schema {@code v}: its defaults, the fields every version requires, on instance "i-1" (robust model 7, 100-400 ns). */
    private static GenericRecord olderAnomaly(Schema v, String id, String kind, String severity, long stepId, double ratio) {
        GenericRecord old = withDefaults(v);
        old.put("anomaly_id", id);
        old.put("instance_id", "i-1");
        old.put("kind", new GenericData.EnumSymbol(v.getField("kind").schema(), kind));
        old.put("severity", new GenericData.EnumSymbol(v.getField("severity").schema(), severity));
        old.put("start_unix_nano", 100L);
        old.put("end_unix_nano", 400L);
        old.put("step_id", stepId);
        old.put("deviation_ratio", ratio);
        old.put("model_kind", "robust");
        old.put("model_version", 7L);
        return old;
    }

    /** A record of an older schema with its fields' defaults. */
    private static GenericRecord withDefaults(Schema older) {
        GenericRecord r = new GenericData.Record(older);
        for (Schema.Field f : older.getFields()) {
            if (f.hasDefaultValue()) {
                r.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        return r;
    }

    /** A roofline header of an older schema: its defaults and the fields every version requires. */
    /** Version {@code index} (oldest first) of the history of {@code current}, which has {@code has} and not {@code lacks}. */
    private static Schema olderVersion(Schema current, int index, String has, String lacks) {
        Schema v = SchemaHistory.olderVersionsOf(current.getFullName()).get(index);
        assertThat(v.getField(has)).isNotNull();
        assertThat(v.getField(lacks)).isNull();
        return v;
    }

    /** A record as a producer on an older schema wrote it (single-object encoding). */
    private static byte[] written(Schema older, GenericRecord r) throws IOException {
        return new BinaryMessageEncoder<GenericRecord>(GenericData.get(), older).encode(r).array();
    }

    private static GenericRecord olderHeader(Schema older, long stepsSeen, double elevatedShare) {
        GenericRecord old = withDefaults(older);
        old.put("steps_seen", stepsSeen);
        old.put("steps_since_refit", 7);
        old.put("extrapolated_steps", 4L);
        old.put("beyond_steps", 1L);
        old.put("elevated_share", elevatedShare);
        old.put("level", 1.0);
        old.put("drift_current", java.nio.ByteBuffer.wrap(new byte[] {1}));
        old.put("drift_current_tail_mask", java.nio.ByteBuffer.wrap(new byte[] {0}));
        old.put("drift_current_start_ns", 5L);
        return old;
    }

    /** A roofline fit of an older schema: its defaults and the fields every version requires (no drift blocks). */
    private static GenericRecord olderFit(Schema older, long version) {
        GenericRecord old = withDefaults(older);
        old.put("version", version);
        old.put("fitted", true);
        old.put("level_anchor", 1.1);
        old.put("level_rise_since_ns", 0L);
        old.put("saw_context", true);
        old.put("saw_decode", true);
        old.put("coefficients", List.of(1.0, 2.0));
        old.put("floor_ns", 5.0);
        old.put("sigma", 0.04);
        old.put("feature_max", List.of(3.0));
        old.put("reference_coefficients", List.of(1.0, 2.0));
        old.put("reference_version", 2L);
        old.put("drift_block_elevated", List.of());
        old.put("drift_block_median", List.of());
        old.put("drift_block_start_ns", List.of());
        old.put("drift_alarms", 0L);
        old.put("tail", List.of(0.5));
        return old;
    }

    private static Schema onlyOlderVersionWithout(Schema current, String field) {
        List<Schema> history = SchemaHistory.olderVersionsOf(current.getFullName());
        assertThat(history).hasSize(1);
        assertThat(history.get(0).getField(field)).isNull();
        return history.get(0);
    }
}

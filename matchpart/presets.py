"""Presets: the fast / default / strong configurations of the multilevel pipeline, chosen in one place."""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Preset:
    """How much work each phase of ``partition`` does.

    coarsen_per_block, coarsen_min: coarsening stops at
        coarsen_to = max(coarsen_min, coarsen_per_block * k) vertices; the initial
        partitioner (recursive bisection, greedy growing + FM) is strong on graphs of a few
        hundred vertices per block and gets slow and weaker far beyond that.
    initial_tries, initial_fm_passes: greedy growings per bisection and 2-way FM passes each.
    initial_hierarchies: independent coarsening hierarchies per multilevel bisection (best kept)
        in the first two levels of the recursion (bisection.DEEP_BISECTION_HIERARCHIES below).
    initial_pairwise_rounds: rounds of 2-way FM between adjacent blocks of the initial partition.
    jet_patience: Jet iterations without improvement before a level's refinement stops.
    fm_passes: k-way FM passes after Jet on every level (CPU, compiled; 0 = off).
    fm_localized: each k-way FM pass is followed by a round of localized searches from every
        boundary vertex (KaFFPa); better cuts for several times the time of the global pass.
    fm_on_gpu: also run that FM when the graph is on the GPU (each level is then copied to
        the host and back); off keeps the whole V-cycle on the device.
    cycles: independent multilevel runs (different seeds) of which the best cut is kept.
    vcycles: extra V-cycles on the best partition: coarsen again contracting only inside
        blocks (so the partition survives to the coarsest level), then refine back up.
    jet_negative_gain: Jet's c (refine.jet.NEGATIVE_GAIN_FACTOR, 0.75, is the standalone
        default: from a random start it needs the larger moves).
    jet_min_improvement: an iteration improves a level's best cut only when it lowers it by
        more than this fraction (the Jet paper's 0.001 is refine.jet.MIN_IMPROVEMENT, the
        standalone default). 0.003 in every preset: on k = 32 meshes Jet went on for 10-16
        iterations of ~0.1-0.3% each, which the FM pass after it makes up (peers instances,
        3 seeds: default 0.969 x the time at 1.0003 x the cut, fast 0.943 x at 1.0007 x;
        0.01: +0.13% cut for no further gain).
    refine_edge_shrink: uncoarsening refines a level only when it has at most this fraction
        of the edges of the last refined finer level (1.0: every level); see
        uncoarsen.refined_levels.
    many_blocks_k, many_blocks_jet_negative_gain, many_blocks_jet_patience: a flat run (not
        deep multilevel) into at least many_blocks_k blocks (0: never) refines with this
        Jet c and patience instead (``for_blocks``).
    """

    name: str
    coarsen_per_block: int
    coarsen_min: int
    initial_tries: int
    initial_fm_passes: int
    jet_patience: int
    fm_passes: int
    cycles: int
    vcycles: int = 0
    fm_on_gpu: bool = False
    initial_hierarchies: int = 3
    initial_pairwise_rounds: int = 2
    fm_localized: bool = True
    refine_edge_shrink: float = 0.85
    jet_negative_gain: float = 0.75
    jet_min_improvement: float = 0.003
    many_blocks_k: int = 0
    many_blocks_jet_negative_gain: float = 0.75
    many_blocks_jet_patience: int = 4

    def coarsen_to(self, k):
        return max(self.coarsen_min, self.coarsen_per_block * int(k))

    def for_blocks(self, k):
        """The preset that refines a flat run into k blocks (see many_blocks_k)."""
        if not self.many_blocks_k or k < self.many_blocks_k:
            return self
        return replace(self, jet_negative_gain=self.many_blocks_jet_negative_gain,
                       jet_patience=self.many_blocks_jet_patience)


PRESETS = {
    # fast: one hierarchy and few tries per bisection, short Jet patience, no FM; Jet's c = 0.5
    # (against 0.75: 0.997x the cut in 0.95x the time, peers instances, 2 seeds); refines a
    # level only when it has at most 0.4 x the edges of the last refined one (about every
    # other level of a mesh) with Jet patience 3: 0.84x the time for 1.017x the cut (peers
    # instances, 3 seeds; 0.25: 0.85x for 1.024x; patience 4: 0.87x for 1.015x); then
    # patience 2: 0.90-0.93x the time for 1.002x the cut (3 seeds, two runs each); then
    # coarsen_per_block 15 (a smaller coarsest graph: initial partitioning 0.80x at k = 32):
    # another 0.98x for 1.0035x (1 initial try instead: 0.95x for 1.022x; 2 initial FM
    # passes: 1.0x for 1.0055x)
    "fast": Preset("fast", coarsen_per_block=15, coarsen_min=160, initial_tries=2, initial_fm_passes=4,
                   jet_patience=2, fm_passes=0, cycles=1, initial_hierarchies=1, initial_pairwise_rounds=0,
                   jet_negative_gain=0.5, refine_edge_shrink=0.4),
    # default: Jet plus one compiled FM pass on every refined level (CPU runs only: on the GPU the
    # V-cycle stays on the device and Jet alone refines). Measured choices:
    # - Jet patience 3, not the paper's 12: on power-law and random graphs every vertex is on
    #   the boundary and Jet oscillates around its best cut; 12 cost 1.4x the time of 4 for
    #   0.3% of cut (rmat, ba, er, delaunay at 2^14, k = 8, 32), and 3 took 0.955x the time
    #   of 4 at the same cut (peers instances, 2 seeds; 2: 0.917x the time, +0.25% cut);
    # - Jet's c = 0.5 on every level, not 0.75: 0.997x the cut in 0.955x the time (peers
    #   instances, 2 seeds; 0.75 on levels below 10000 vertices and 0.5 / 0.25 above, as the
    #   Jet paper does: 1.0006x / 1.0027x the cut in 0.974x the time);
    # - one FM pass: a second gave 0.2% of cut for 1.3x the time (delaunay/rgg 2^16, ba 2^14);
    # - global FM passes only: localized rounds gave 0.899 instead of 0.907 x METIS's cut over
    #   the shared graphs (k = 2, 8, 32) for 5-10x the global pass's time on power-law graphs;
    # - 4 tries and 2 hierarchies per initial bisection (the same cut over the shared graphs
    #   as 8 and 3, in two thirds of the time); 2 tries and 1 hierarchy gave the same cut at
    #   k = 32 in 0.9x the time but lost 2-60% at k = 2 and 8 (rgg2d k = 2: 26 -> 42), where
    #   one bisection is most of the result;
    # - 1 round of pairwise FM after the initial k-way FM, not 2: +0.3% of cut for 0.92x the
    #   time at k = 32 (shared graphs and four 2^16 families, one run); none at all lost 3%
    #   (heavy vertices: example_weighted k = 32 went from 6617 to 9677);
    # - FM on GPU graphs too, so that the GPU's partition is the CPU's (without it an H200 cut
    #   delaunay 2^20 k = 32 at 18749 against the CPU's 18245);
    # - from 2048 blocks on (flat runs), Jet's c = 0.75 and patience 4: with ~100 vertices per
    #   block the larger negative-gain moves pay on meshes (2 seeds: delaunay 2^20 k = 8192
    #   0.986 x the cut in 1.17 x the time, 2^18 k = 2048 0.987 x in 1.21 x, k = 4096 0.995 x,
    #   grid 512^2 k = 4096 0.992 x in 0.99 x; k = 256-1024 gained 0-0.5% for 1.1-1.3 x);
    #   deep runs keep 0.5 and 3 (rgg 2^20 k = 8192, deep: 1.008 x the cut with them).
    "default": Preset("default", coarsen_per_block=20, coarsen_min=160, initial_tries=4,
                      initial_fm_passes=4, jet_patience=3, fm_passes=1, cycles=1, fm_localized=False,
                      fm_on_gpu=True, initial_hierarchies=2, initial_pairwise_rounds=1, jet_negative_gain=0.5,
                      many_blocks_k=2048),
    # strong: the better of two default runs, then three iterated V-cycles on it (coarsen
    # inside the blocks, refine back up), FM on the GPU too. Measured over the peers
    # instances where METIS takes >= 10 ms (process CPU, one thread, 3 seeds; cut as
    # gmean of the mean cut / METIS's): one run and three V-cycles gave 0.889 (seeds 0-2) and
    # 0.885 (seeds 3-5); two runs and three V-cycles 0.878 in 1.39 x the time; two runs
    # and two V-cycles 0.882 and 0.877 in 1.17 x and 1.07 x; three runs and one V-cycle
    # 0.887 in 1.27 x; localized FM 0.878 in 2.5 x; 8 initial tries on top of two runs and
    # two V-cycles 0.880 in 1.26 x. In one peers run (seed 0, wall time): two runs and
    # three V-cycles 0.876 x METIS's cut in 6.63 x its time, two and two 0.879 in 5.52 x.
    # Earlier (one run each): with 2 V-cycles and 2 FM passes 0.879 x at 6.1 x; the earlier
    # strong preset (16 tries, Jet patience 12, 2 localized FM passes, the better of 2 runs,
    # then 2 V-cycles) reached 0.852 x at 30 x.
    "strong": Preset("strong", coarsen_per_block=20, coarsen_min=160, initial_tries=4,
                     initial_fm_passes=4, jet_patience=3, fm_passes=1, cycles=2, vcycles=3,
                     fm_localized=False, fm_on_gpu=True, initial_hierarchies=2, initial_pairwise_rounds=1,
                     jet_negative_gain=0.5, many_blocks_k=2048),
}


def get_preset(preset):
    """A Preset from its name (or the Preset itself)."""
    if isinstance(preset, Preset):
        return preset
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[preset]

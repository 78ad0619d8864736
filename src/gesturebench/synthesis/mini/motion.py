"""Mini-BEAT2 motion: SMPL-X axis-angle in BEAT2's joint order at 30 fps, a sum of smooth layers
around the speaker's rest pose (arms hanging, elbows soft, fingers relaxed).

Breathing on the spine; idle sway and weight shifts of the pelvis (±1–3.5 cm, 0.8–1.5 s transitions)
with the pelvis rolling toward the unloaded side, legs solved by two-bone IK so both ankles stay
fixed in world space and the feet flat (`synthesis.stance`); head drift and small nods on strokes;
slow finger-curl articulation; jaw opening with the audio's frame RMS; smooth small expressions
(the first following the audio). Gestures blend the arms toward class forms with C² (smootherstep)
envelopes rising over the 0.35 s before an interval and falling from its last 0.05 s to 0.3 s after
it: deictic = the dominant arm extended forward, index finger out, other fingers curled, held;
iconic = both open hands tracing a circle or a box outline in front of the chest; metaphoric = both
forearms supinated (palms up), open hands moving outward; beat = forearm(s) raised to gesture space.
Beat strokes lift the forearm over 0.3 s and strike down in 0.15 s, ending with zero velocity
exactly on the stressed word's onset; a slow forward/back shoulder component keeps the top of the
lift from being a stop.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.spatial.transform import Rotation

from gesturebench.body.joints import LEFT_HAND, RIGHT_HAND
from gesturebench.body.procedural import REST_JOINTS
from gesturebench.data.records import FPS, N_EXPRESSIONS, N_JOINTS, Motion, SemInterval
from gesturebench.synthesis.curves import smooth_noise, smootherstep, window
from gesturebench.synthesis.gestures import (
    ARM_JOINTS,
    BEAT_HAND,
    BEAT_READY,
    COLLAR,
    FLEX,
    N_ARM,
    OPEN,
    PALM_UP,
    POINT,
    RELAXED,
    YAW,
    Stroke,
    arm_rotvecs,
    hand_rotvecs,
    mirror,
    stroke_offsets,
)
from gesturebench.synthesis.mini.plan import SequencePlan
from gesturebench.synthesis.mini.speakers import SpeakerStyle
from gesturebench.synthesis.mini.speech import frame_envelope
from gesturebench.synthesis.stance import LEGS, leg_ik

REST_TRANS_Y = 1.29
# The pelvis sits this much (m) below straight legs, so weight shifts never overstretch them.
_KNEE_SOFTEN = 0.004


def _gesture_form(
    rng: np.random.Generator,
    style: SpeakerStyle,
    iv: SemInterval,
    t: np.ndarray,
    strokes: tuple[Stroke, ...],
) -> tuple[np.ndarray, np.ndarray]:
    """Target arm parameters (T, 2, N_ARM) and finger curls (2, 5) of the gesture of interval
    `iv`."""
    arms = np.broadcast_to(style.rest_arm, (len(t), 2, N_ARM)).copy()
    hands = np.stack([RELAXED, RELAXED])
    dom = style.dominant
    phase = smootherstep((t - iv.start - 0.05) / max(iv.end - iv.start - 0.15, 0.1))
    if iv.label == "deictic":
        arms[:, dom] = [
            0.05,
            1.45,
            rng.uniform(1.05, 1.3),
            rng.uniform(-0.25, 0.55),
            0.0,
            0.12,
            0.4,
            0.0,
            0.0,
        ]
        hands[dom] = POINT
    elif iv.label == "iconic":
        arms[:] = [0.05, 1.3, 0.75, 0.1, 0.0, 1.05, -0.5, -0.1, 0.0]
        # Short intervals: a smaller shape.
        radius = 0.22 * style.amplitude * min(1.0, iv.end - iv.start)
        if rng.random() < 0.5:  # circle
            arms[:, :, FLEX] += (radius * np.sin(2 * np.pi * phase))[:, None]
            arms[:, :, YAW] += (radius * (1 - np.cos(2 * np.pi * phase)))[:, None]
        else:  # box outline: four sides, each eased, stopping at the corners
            corners = radius * np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
            side = np.minimum((phase * 4).astype(int), 3)
            frac = smootherstep(phase * 4 - side)[:, None]
            yaw_flex = corners[side] + (corners[side + 1] - corners[side]) * frac
            arms[:, :, YAW] += yaw_flex[:, :1]
            arms[:, :, FLEX] += yaw_flex[:, 1:]
        hands[:] = OPEN
    elif iv.label == "metaphoric":
        arms[:] = [0.05, 1.32, 0.55, 0.0, 0.0, 1.3, PALM_UP, -0.25, 0.0]
        arms[:, :, YAW] += (0.5 * style.amplitude * phase)[:, None]
        hands[:] = OPEN
    else:  # beat: forearms in gesture space; the strokes themselves come from the plan
        active = sorted(
            {arm for s in strokes if iv.start <= s.time <= iv.end for arm in s.arms}
        ) or [dom]
        arms[:, active] = BEAT_READY
        hands[active] = BEAT_HAND
    return arms, hands


def _weight_shifts(rng: np.random.Generator, t: np.ndarray, scale: float) -> np.ndarray:
    """Lateral pelvis offset (m): levels of ±1–3.5 cm held for 6–14 s, changed over 0.8–1.5 s."""
    shift = np.zeros_like(t)
    level, when, side = 0.0, float(rng.uniform(1.0, 6.0)), float(rng.choice([-1.0, 1.0]))
    while when < t[-1]:
        new = side * float(rng.uniform(0.01, 0.035)) * scale
        shift += (new - level) * smootherstep((t - when) / float(rng.uniform(0.8, 1.5)))
        level, side, when = new, -side, when + float(rng.uniform(6.0, 14.0))
    return shift


def synthesize_motion(
    rng: np.random.Generator, style: SpeakerStyle, plan: SequencePlan, audio: np.ndarray
) -> Motion:
    """SMPL-X motion for `plan` (see the module docstring for the layers)."""
    n = plan.n_frames
    t = np.arange(n) / FPS
    J = REST_JOINTS
    poses = np.zeros((n, N_JOINTS, 3))

    def noise(dims: int, cutoff_hz: float) -> np.ndarray:
        return smooth_noise(rng, n, dims, cutoff_hz)

    # Stance, sway and weight shifts; the legs follow by IK so the ankles stay where they started.
    facing = Rotation.from_rotvec([0.0, rng.uniform(-0.15, 0.15), 0.0])
    trans0 = np.array([rng.uniform(-0.1, 0.1), REST_TRANS_Y, rng.uniform(-0.1, 0.1)])
    ankles = np.stack([trans0 + J[0] + facing.apply(J[ankle] - J[0]) for _, _, ankle in LEGS])
    local = np.zeros((n, 3))
    local[:, 0] = _weight_shifts(rng, t, style.sway) + 0.004 * style.sway * noise(1, 0.25)[:, 0]
    local[:, 1] = -_KNEE_SOFTEN
    local[:, 2] = 0.006 * style.sway * noise(1, 0.15)[:, 0]
    pelvis = trans0 + J[0] + facing.apply(local)
    sway = np.column_stack(
        [0.015 * noise(1, 0.15)[:, 0], 0.025 * noise(1, 0.1)[:, 0], 0.8 * local[:, 0]]
    )
    root = facing * Rotation.from_rotvec(sway)
    poses[:, 0] = root.as_rotvec()
    for joint, rotvec in leg_ik(
        root, pelvis, ankles, facing, facing.apply([0.0, 0.0, 1.0])
    ).items():
        poses[:, joint] = rotvec

    # Spine: breathing, and most of the pelvis sway taken back so the chest stays upright; head
    # drift and nods.
    breath = np.sin(2 * np.pi * style.breath_hz * t + rng.uniform(0, 2 * np.pi))
    for joint, share in ((3, 0.4), (6, 0.3), (9, 0.2)):
        poses[:, joint] = -share * sway + 0.01 * noise(3, 0.2)
        poses[:, joint, 0] -= 0.012 * breath
    nods = sum(
        0.05 * s.amplitude * np.exp(-0.5 * ((t - s.time + 0.03) / 0.1) ** 2) for s in plan.strokes
    )
    poses[:, 12] = 0.02 * noise(3, 0.3)
    poses[:, 15] = 0.04 * noise(3, 0.3)
    poses[:, 15, 0] += nods

    # Arms and hands: rest pose, gestures blended in over their intervals, beat strokes, idle drift.
    arms = np.broadcast_to(style.rest_arm, (n, 2, N_ARM)).copy()
    curls = np.broadcast_to(RELAXED, (n, 2, 5)).copy()
    engaged = np.zeros(n)
    for iv in plan.sem:
        envelope = window(t, iv.start - 0.35, iv.start, iv.end - 0.05, iv.end + 0.3)
        target, shape = _gesture_form(rng, style, iv, t, plan.strokes)
        arms += envelope[:, None, None] * (target - arms)
        curls += envelope[:, None, None] * (shape - curls)
        engaged = np.maximum(engaged, envelope)
    calm = (1.0 - 0.85 * engaged)[:, None, None]
    arms += stroke_offsets(t, plan.strokes) + calm * 0.02 * noise(2 * N_ARM, 0.25).reshape(
        n, 2, N_ARM
    )
    arms[:, :, COLLAR] += 0.01 * breath[:, None]
    curls += calm * 0.07 * noise(10, 0.4).reshape(n, 2, 5)
    spread = 0.12 * np.clip(1.0 - curls[:, :, :4].mean(axis=-1) / 0.4, 0.0, 1.0)
    for side, (joints, hand) in enumerate(zip(ARM_JOINTS, (LEFT_HAND, RIGHT_HAND), strict=True)):
        arm, fingers = arm_rotvecs(arms[:, side]), hand_rotvecs(curls[:, side], spread[:, side])
        poses[:, list(joints)] = mirror(arm) if side else arm
        poses[:, list(hand)] = mirror(fingers) if side else fingers

    # Face: jaw with the speech envelope, slow eye drift, small smooth expressions.
    loudness = gaussian_filter1d(frame_envelope(audio, n), 2.0)
    poses[:, 22, 0] = 0.01 + 0.1 * loudness
    poses[:, 23, :2] = poses[:, 24, :2] = 0.03 * noise(2, 0.3)
    expressions = noise(N_EXPRESSIONS, 0.6) * 0.3 * np.exp(-np.arange(N_EXPRESSIONS) / 15.0)
    expressions[:, 0] += 0.8 * loudness - 0.3
    expressions[:, 1] += 0.3 * loudness

    return Motion(
        poses=poses.reshape(n, 3 * N_JOINTS),
        trans=pelvis - J[0],
        betas=style.betas,
        expressions=expressions,
        fps=FPS,
    )

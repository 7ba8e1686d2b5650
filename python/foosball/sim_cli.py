"""`foosball sim ...`: run matches headless, replay recordings, list controllers."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    sim = subparsers.add_parser("sim", help="simulated table: matches, replays")
    sub = sim.add_subparsers(dest="sim_command",
                             metavar="{match,replay,controllers,tournament,tune}")

    match = sub.add_parser("match", help="play a headless match and print the result")
    match.add_argument("--robot", default="hold", help="controller for the robot side")
    match.add_argument("--opponent", default="club", help="controller or level for the human side")
    match.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    match.add_argument("--seed", type=int, default=0)
    match.add_argument(
        "--randomise", action="store_true", help="draw the realism parameters from their ranges"
    )
    match.add_argument("--json", action="store_true", help="print the full result as JSON")
    match.add_argument("--record", metavar="FILE",
                       help="write the match (CBOR sequence; `foosball report`, `foosball replay`)")
    match.add_argument(
        "--record-every", type=int, default=1, metavar="N", help="record every N-th frame"
    )
    match.set_defaults(func=_match)

    replay = sub.add_parser("replay", help="render a recording to a GIF, PNG strip or video")
    replay.add_argument("file")
    replay.add_argument("--out", default="replay.gif", help=".gif, .mp4, .avi or .png (strip)")
    replay.add_argument("--start", type=float, default=0.0, help="s")
    replay.add_argument("--end", type=float, default=None, help="s")
    replay.add_argument("--every", type=int, default=4, help="render every N-th state")
    replay.add_argument("--scale", type=float, default=0.5)
    replay.add_argument(
        "--sensor-effects", action="store_true", help="keep sensor noise and lighting flicker"
    )
    replay.set_defaults(func=_replay)

    camera = sub.add_parser("camera", help="the live simulated table seen by a camera: "
                                           "frames on a UNIX socket for the ball tracker")
    camera.add_argument("--socket", required=True, help="path of the UNIX socket to serve")
    camera.add_argument("--fps", type=float, default=100.0)
    camera.add_argument("--opponent", default="club",
                        help="who plays the human's rods: rookie | club | pro | hold | "
                             "browser (a person, on the page at --player-port)")
    camera.add_argument("--player-port", type=int, default=8090, metavar="PORT",
                        help="with --opponent browser: the port of the player's page")
    camera.add_argument("--player-host", default="0.0.0.0",
                        help="with --opponent browser: the address the page listens on")
    camera.add_argument("--rod-poses", type=int, metavar="PORT",
                        help="UDP port on 127.0.0.1 where the drive emulator publishes the "
                             "robot's rod poses (without it the robot's rods stand still)")
    camera.add_argument("--seed", type=int, default=1)
    camera.add_argument("--rt-priority", type=int, default=0,
                        help="SCHED_FIFO priority (0: off): a real camera does not compete "
                             "for the CPU, so on a busy machine the simulated one must not")
    camera.add_argument("--truth", metavar="HOST:PORT",
                        help="also send where the ball really is, one UDP datagram per frame "
                             "(JSON; for the acceptance tests, no agent reads it)")
    camera.add_argument("--write-calibration", metavar="FILE",
                        help="first write the camera's calibration (from its rendered markers)")
    camera.set_defaults(func=_camera)

    controllers = sub.add_parser("controllers", help="list the registered controllers")
    controllers.set_defaults(func=_controllers)

    try:  # many matches in parallel: the strategy area's tournament runner and search
        from foosball.lab.tournament import register_tournament
        from foosball.lab.tune import register_tune
    except ModuleNotFoundError:
        pass
    else:
        register_tournament(sub)
        register_tune(sub)
    sim.set_defaults(func=lambda _args: sim.print_help() or 2)


def _match(args: argparse.Namespace) -> int:
    from foosball.sim.match import Match

    stream = open(args.record, "wb") if args.record else None  # noqa: SIM115 - closed below
    try:
        match = Match(
            args.robot,
            args.opponent,
            seed=args.seed,
            duration=args.duration,
            randomise=args.randomise,
        )
        recorder = None
        if stream is not None:
            from foosball.sim.record import record_match

            recorder = record_match(match, stream, every=args.record_every,
                                    meta={"robot": args.robot, "opponent": args.opponent,
                                          "seed": args.seed, "duration_s": args.duration})
        outcome = match.run()
        if recorder is not None:
            recorder.finish(outcome, round(match.world.time * 1e9))
        result = outcome.summary()
    except KeyError as exc:
        print(f"foosball sim match: {exc.args[0]}", file=sys.stderr)
        return 2
    finally:
        if stream is not None:
            stream.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        goals, saves = result["goals"], result["saves"]
        print(
            f"{args.robot} {goals['robot']} - {goals['human']} {args.opponent} "
            f"in {args.duration:g} s (seed {args.seed}); shots robot "
            f"{result['shots']['robot']['shots']} human {result['shots']['human']['shots']}; "
            f"saves robot {saves['robot']} human {saves['human']}; "
            f"{result['speed_vs_real_time']}x real time"
        )
        for team, kinds in result["goals_against_by_kind"].items():
            print(f"  {team} conceded: " + ", ".join(
                f"{n} {kind.replace('_', ' ')}" for kind, n in kinds.items()))
        from foosball.lab.tournament import rules_lines

        print("\n".join(rules_lines(result)))
    return 0


def _replay(args: argparse.Namespace) -> int:
    from foosball.sim.record import read_recording, replay_frames, write_video

    recording = read_recording(args.file)
    for warning in recording.warnings:
        print(f"foosball sim replay: warning: {warning}", file=sys.stderr)
    frames = replay_frames(
        recording,
        start=args.start,
        end=args.end,
        every=args.every,
        sensor_effects=args.sensor_effects,
    )
    if not frames:
        print("foosball sim replay: no states in that time range", file=sys.stderr)
        return 1
    try:
        write_video(frames, args.out, fps=1.0 / (recording.frame_period * args.every),
                    scale=args.scale)
    except (ValueError, OSError) as exc:
        print(f"foosball sim replay: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(frames)} frames")
    return 0


def _camera(args: argparse.Namespace) -> int:
    import signal

    from foosball.sim.live import LiveTable
    from foosball.sim.vision_source import sim_calibration
    from foosball.vision.calibration import write_calibration
    from foosball.vision.frame_link import CameraServer

    if args.write_calibration:
        write_calibration(sim_calibration(), args.write_calibration)
    truth = None
    if args.truth:
        host, _, port = args.truth.rpartition(":")
        truth = (host or "127.0.0.1", int(port))
    table = LiveTable(args.opponent, args.seed, args.rod_poses, truth=truth,
                      player_port=args.player_port, player_host=args.player_host)
    server = CameraServer(args.socket, args.fps, table.next_frame)
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "running", False))
    if args.rt_priority:
        from foosball.realtime import realtime_threads, set_fifo

        set_fifo(args.rt_priority)
        # The table's own threads (the player's page) too: one left ordinary holds the
        # interpreter lock the frames need while real-time threads keep it off its CPU.
        realtime_threads(args.rt_priority)
        # OpenCV's worker threads (not Python's: started by the renderer's first frame, at
        # the ordinary policy) would make every frame wait for a thread the rig's real-time
        # load starves (a frame 232 ms late); in this thread alone it also costs less CPU.
        import cv2

        cv2.setNumThreads(0)
    robot = f"from the drive emulator on port {args.rod_poses}" if args.rod_poses else "held"
    print(f"camera: {args.fps:g} fps on {args.socket}; opponent {args.opponent}; robot rods "
          f"{robot}", flush=True)
    if table.player is not None:
        print(f"camera: you play the human's rods: {table.player.url}", flush=True)
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        table.close()
        robot, human = table.score()
        summary = table.match.result.summary()
        print(f"camera: {server.sent} frames; score robot {robot} : {human} human; "
              f"shots robot {summary['shots']['robot']['shots']} human "
              f"{summary['shots']['human']['shots']}; saves robot {summary['saves']['robot']} "
              f"human {summary['saves']['human']}; {table.poses_received} rod-pose datagrams",
              flush=True)
    return 0


def _controllers(_args: argparse.Namespace) -> int:
    from foosball.sim.controllers import CONTROLLERS

    for name in CONTROLLERS:
        print(name)
    return 0

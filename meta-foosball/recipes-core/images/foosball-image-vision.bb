SUMMARY = "Vision board image: camera stack and ball tracker"
FOOSBALL_IMAGE_BOARD = "vision"
# V4L2 capture through GStreamer into OpenCV's Python bindings.
FOOSBALL_IMAGE_AGENTS = " \
    python3-foosball-vision \
    v4l-utils \
    gstreamer1.0 \
    gstreamer1.0-plugins-base-app \
    gstreamer1.0-plugins-base-videoconvertscale \
    gstreamer1.0-plugins-good-video4linux2 \
    python3-opencv \
"
require foosball-image.inc

# Runs in libuv's directory scope right after its project(): libuv builds its tests only
# "when we are the root project" (CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR).
set(CMAKE_SOURCE_DIR "${PROJECT_SOURCE_DIR}")

# Runs in the directory scope of googletest's project(gtest) (its googletest/ folder),
# where its Python tests are declared with PYTHONPATH=${CMAKE_SOURCE_DIR} to import
# googletest.test.gtest_test_utils: they expect googletest's tree to be the top project.
get_filename_component(CMAKE_SOURCE_DIR "${PROJECT_SOURCE_DIR}" DIRECTORY)

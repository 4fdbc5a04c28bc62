#include "topology/link_class.h"

#include <doctest/doctest.h>

using namespace topofit;

TEST_CASE("ParseLink accepts every class nvidia-smi prints") {
  CHECK(ParseLink("X")->cls == LinkClass::Self);
  CHECK(ParseLink("SYS")->cls == LinkClass::Sys);
  CHECK(ParseLink("NODE")->cls == LinkClass::Node);
  CHECK(ParseLink("PHB")->cls == LinkClass::Phb);
  CHECK(ParseLink("PXB")->cls == LinkClass::Pxb);
  CHECK(ParseLink("PIX")->cls == LinkClass::Pix);
  auto nv = ParseLink("NV18");
  REQUIRE(nv);
  CHECK(nv->cls == LinkClass::Nv);
  CHECK(nv->nvlinks == 18);
  CHECK(ToString(*nv) == "NV18");
}

TEST_CASE("ParseLink reads the older drivers' SOC as SYS and prints it back as SYS") {
  auto soc = ParseLink("SOC");
  REQUIRE(soc);
  CHECK(*soc == Link{LinkClass::Sys, 0});
  CHECK(ToString(*soc) == "SYS");
  CHECK_FALSE(ParseLink("soc"));
}

TEST_CASE("ParseLink refuses what is not a link") {
  CHECK_FALSE(ParseLink(""));
  CHECK_FALSE(ParseLink("NV"));
  CHECK_FALSE(ParseLink("NV0"));
  CHECK_FALSE(ParseLink("NV256"));
  CHECK_FALSE(ParseLink("NVX"));
  CHECK_FALSE(ParseLink("nv2"));
  CHECK_FALSE(ParseLink(" X "));
}

TEST_CASE("Links order from slowest to fastest") {
  CHECK(*ParseLink("SYS") < *ParseLink("NODE"));
  CHECK(*ParseLink("NODE") < *ParseLink("PHB"));
  CHECK(*ParseLink("PHB") < *ParseLink("PXB"));
  CHECK(*ParseLink("PXB") < *ParseLink("PIX"));
  CHECK(*ParseLink("PIX") < *ParseLink("NV1"));
  CHECK(*ParseLink("NV1") < *ParseLink("NV2"));
}

TEST_CASE("ParseLinkClassName reads annotation values case-insensitively") {
  CHECK(ParseLinkClassName("nv") == LinkClass::Nv);
  CHECK(ParseLinkClassName("PIX") == LinkClass::Pix);
  CHECK(ParseLinkClassName("node") == LinkClass::Node);
  CHECK_FALSE(ParseLinkClassName("NV2"));
  CHECK_FALSE(ParseLinkClassName("fast"));
}
